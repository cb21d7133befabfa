// OCSF events of one class as Parquet, with the class's own columns: the Parquet schema is read from our written-down
// JSON Schema of the class (the one the tests validate every event against), so the file holds exactly the
// attributes we emit, nested as OCSF nests them (objects as structs, arrays as lists). Integers are INT64 where OCSF
// types them long_t or timestamp_t (epoch milliseconds, as OCSF has them) and INT32 where integer_t.
import { encodeParquet } from '../core/parquet.ts';
import apiActivity from './ocsf-1.8.0-api-activity.schema.json' with { type: 'json' };
import datastoreActivity from './ocsf-1.8.0-datastore-activity.schema.json' with { type: 'json' };
import detectionFinding from './ocsf-1.8.0-detection-finding.schema.json' with { type: 'json' };
import deviceInventory from './ocsf-1.8.0-device-inventory-info.schema.json' with { type: 'json' };
import objects from './ocsf-1.8.0-objects.schema.json' with { type: 'json' };
import softwareInventory from './ocsf-1.8.0-software-inventory-info.schema.json' with { type: 'json' };
import userAccess from './ocsf-1.8.0-user-access-management.schema.json' with { type: 'json' };
import { OCSF_CLASSES, OCSF_VERSION, type OcsfClassKey } from './ocsf-objects.ts';

type JsonSchema = { [key: string]: unknown };
type SchemaElement = Parameters<typeof encodeParquet>[0]['schema'][number];

const fileName = (schema: { $id: string }): string => schema.$id.slice(schema.$id.lastIndexOf('/') + 1);
const FILES = new Map<string, JsonSchema>(
  [
    objects,
    apiActivity,
    datastoreActivity,
    detectionFinding,
    deviceInventory,
    softwareInventory,
    userAccess,
  ].map((s) => [fileName(s), s as JsonSchema]),
);

/** Each class's written-down schema. */
export const OCSF_SCHEMAS: Readonly<Record<OcsfClassKey, JsonSchema>> = {
  apiActivity: apiActivity as JsonSchema,
  datastoreActivity: datastoreActivity as JsonSchema,
  detectionFinding: detectionFinding as JsonSchema,
  deviceInventory: deviceInventory as JsonSchema,
  softwareInventory: softwareInventory as JsonSchema,
  userAccess: userAccess as JsonSchema,
};

/** Follows $ref (within a file or to the shared objects' file) to the definition it names. */
function resolve(node: JsonSchema, file: string): { node: JsonSchema; file: string } {
  let current = node;
  let at = file;
  while (typeof current.$ref === 'string') {
    const [target = '', pointer = ''] = current.$ref.split('#');
    if (target !== '') at = target;
    let next: unknown = FILES.get(at);
    for (const part of pointer.split('/').filter(Boolean)) next = (next as JsonSchema | undefined)?.[part];
    if (next === undefined) throw new Error(`unresolved $ref ${current.$ref} in ${file}`);
    current = next as JsonSchema;
  }
  return { node: current, file: at };
}

type Leaf = 'string' | 'boolean' | 'int32' | 'int64';
type Shape =
  | { kind: 'leaf'; leaf: Leaf }
  | { kind: 'struct'; fields: { name: string; required: boolean; shape: Shape }[] }
  | { kind: 'list'; item: Shape };

function leafOf(node: JsonSchema, ocsfType: unknown): Leaf {
  const sample = node.const ?? (Array.isArray(node.enum) ? node.enum[0] : undefined);
  const type =
    node.type ?? (sample === undefined ? undefined : typeof sample === 'number' ? 'integer' : typeof sample);
  if (type === 'string') return 'string';
  if (type === 'boolean') return 'boolean';
  if (type === 'integer' || type === 'number') {
    return ocsfType === 'integer_t' ? 'int32' : 'int64';
  }
  throw new Error(`no Parquet type for ${JSON.stringify(node).slice(0, 80)}`);
}

function shapeOf(outer: JsonSchema, file: string): Shape {
  const { node, file: at } = resolve(outer, file);
  if (node.type === 'object' || node.properties !== undefined) {
    const required = new Set((node.required as string[] | undefined) ?? []);
    const properties = (node.properties ?? {}) as Record<string, JsonSchema>;
    return {
      kind: 'struct',
      fields: Object.entries(properties).map(([name, child]) => ({
        name,
        required: required.has(name),
        shape: shapeOf(child, at),
      })),
    };
  }
  if (node.type === 'array') return { kind: 'list', item: shapeOf(node.items as JsonSchema, at) };
  return { kind: 'leaf', leaf: leafOf(node, outer['x-ocsf-type'] ?? node['x-ocsf-type']) };
}

const LEAF_ELEMENT: Record<Leaf, Pick<SchemaElement, 'type' | 'converted_type'>> = {
  string: { type: 'BYTE_ARRAY', converted_type: 'UTF8' },
  boolean: { type: 'BOOLEAN' },
  int32: { type: 'INT32' },
  int64: { type: 'INT64' },
};

/** The schema elements of one field, depth first, as Parquet lists them (lists in the three-level form). */
function elementsOf(name: string, required: boolean, shape: Shape): SchemaElement[] {
  const repetition_type = required ? 'REQUIRED' : 'OPTIONAL';
  if (shape.kind === 'leaf') return [{ name, repetition_type, ...LEAF_ELEMENT[shape.leaf] }];
  if (shape.kind === 'struct') {
    return [
      { name, repetition_type, num_children: shape.fields.length },
      ...shape.fields.flatMap((f) => elementsOf(f.name, f.required, f.shape)),
    ];
  }
  return [
    { name, repetition_type, converted_type: 'LIST', num_children: 1 },
    { name: 'list', repetition_type: 'REPEATED', num_children: 1 },
    ...elementsOf('element', true, shape.item),
  ];
}

/** A value as the writer takes it: INT64 as bigint, structs with their fields only, absent as null. */
function writerValue(value: unknown, shape: Shape): unknown {
  if (value === undefined || value === null) return null;
  if (shape.kind === 'leaf') return shape.leaf === 'int64' ? BigInt(value as number) : value;
  if (shape.kind === 'list') return (value as unknown[]).map((v) => writerValue(v, shape.item));
  const out: Record<string, unknown> = {};
  for (const f of shape.fields)
    out[f.name] = writerValue((value as Record<string, unknown>)[f.name], f.shape);
  return out;
}

export interface OcsfParquetClass {
  key: OcsfClassKey;
  class_uid: number;
  /** The top-level columns, in the schema's order. */
  columns: { name: string; required: boolean; shape: Shape }[];
  schema: SchemaElement[];
}

const CACHE = new Map<OcsfClassKey, OcsfParquetClass>();

/** A class's Parquet layout, from its written-down schema (read once). */
export function ocsfParquetClass(key: OcsfClassKey): OcsfParquetClass {
  const cached = CACHE.get(key);
  if (cached) return cached;
  const root = OCSF_SCHEMAS[key];
  const shape = shapeOf(root, fileName(root as { $id: string }));
  if (shape.kind !== 'struct') throw new Error(`the ${key} schema is not an object`);
  const layout: OcsfParquetClass = {
    key,
    class_uid: OCSF_CLASSES[key].class_uid,
    columns: shape.fields,
    schema: [
      { name: 'root', num_children: shape.fields.length },
      ...shape.fields.flatMap((f) => elementsOf(f.name, f.required, f.shape)),
    ],
  };
  CACHE.set(key, layout);
  return layout;
}

/** Events of one class (each valid against its schema) as one Parquet file, one row group, in the order given. */
export function encodeOcsfParquet(key: OcsfClassKey, events: readonly object[]): Uint8Array {
  const layout = ocsfParquetClass(key);
  return encodeParquet({
    schema: layout.schema,
    columnData: layout.columns.map((c) => ({
      name: c.name,
      data: events.map((e) => writerValue((e as Record<string, unknown>)[c.name], c.shape)),
    })),
    rowGroupSize: Math.max(1, events.length),
    statistics: true,
    createdBy: `agent-control-plane OCSF ${OCSF_VERSION} export`,
  });
}
