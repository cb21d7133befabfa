// One Parquet file from columns and an explicit schema, in memory: hyparquet-writer's ParquetWriter, which its
// `parquetWriteBuffer` wraps without the schema inference and VARIANT encoding a bundle would carry for nothing. The
// writer stamps no time, so the same rows in the same order give the same bytes.
import { ByteWriter, ParquetWriter } from 'hyparquet-writer';

type WriterOptions = ConstructorParameters<typeof ParquetWriter>[0];
type WriteOptions = Parameters<ParquetWriter['write']>[0];

export interface ParquetInput {
  schema: WriterOptions['schema'];
  columnData: WriteOptions['columnData'];
  rowGroupSize: number;
  statistics: boolean;
  createdBy: string;
}

export function encodeParquet(input: ParquetInput): Uint8Array {
  const writer = new ByteWriter();
  const parquet = new ParquetWriter({
    writer,
    schema: input.schema,
    statistics: input.statistics,
    createdBy: input.createdBy,
  });
  parquet.write({ columnData: input.columnData, rowGroupSize: input.rowGroupSize });
  parquet.finish();
  return new Uint8Array(writer.getBuffer());
}
