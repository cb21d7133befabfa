// Schemas of every kind zod turns into JSON Schema, built with the `z` given: test/infra/bundle-stubs.test.ts builds
// them with zod as the Lambda bundles carry it (infra/bundle/zod-json-schema-processors.ts) and with zod itself.
import type * as Zod from 'zod';

type Z = typeof Zod;

export function samples(z: Z): Record<string, Zod.ZodType> {
  interface Tree {
    name: string;
    children: Tree[];
  }
  const tree: Zod.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
  const shared = z.object({ id: z.uuid() }).describe('shared');
  return {
    strings: z.object({
      plain: z.string().min(1).max(20),
      email: z.email(),
      uuid: z.uuid(),
      url: z.url(),
      pattern: z.string().regex(/^[a-z]+$/),
      datetime: z.iso.datetime(),
      date: z.iso.date(),
      base64: z.base64(),
      trimmed: z.string().trim().toLowerCase(),
    }),
    numbers: z.object({
      int: z.number().int().min(0).max(10),
      positive: z.number().positive(),
      step: z.number().multipleOf(5),
      coerced: z.coerce.number(),
      bigint: z.bigint(),
      nan: z.nan(),
    }),
    simple: z.tuple([z.boolean(), z.null(), z.any(), z.unknown(), z.never(), z.date(), z.undefined()]),
    choices: z.object({
      enum: z.enum(['a', 'b']),
      literal: z.literal('x'),
      literals: z.literal([1, 2]),
      template: z.templateLiteral(['id-', z.number()]),
      union: z.union([z.string(), z.number()]),
      discriminated: z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('a'), a: z.string() }),
        z.object({ kind: z.literal('b'), b: z.number() }),
      ]),
      xor: z.xor([z.object({ a: z.string() }), z.object({ b: z.string() })]),
      intersection: z.intersection(z.object({ a: z.string() }), z.object({ b: z.number() })),
    }),
    containers: z.object({
      array: z.array(z.string()).min(1).max(3),
      tuple: z.tuple([z.string()], z.number()),
      record: z.record(z.string(), z.number()),
      partialRecord: z.partialRecord(z.enum(['x', 'y']), z.string()),
      map: z.map(z.string(), z.number()),
      set: z.set(z.string()),
      strict: z.strictObject({ a: z.string() }),
      loose: z.looseObject({ a: z.string() }),
      catchall: z.object({ a: z.string() }).catchall(z.number()),
    }),
    wrappers: z.object({
      optional: z.string().optional(),
      exactOptional: z.string().exactOptional(),
      nullable: z.string().nullable(),
      nullish: z.string().nullish(),
      defaulted: z.string().default('d'),
      prefaulted: z.string().prefault('p'),
      caught: z.number().catch(0),
      readonly: z.array(z.string()).readonly(),
      nonoptional: z.string().optional().nonoptional(),
      piped: z.string().pipe(z.coerce.number()),
      transformed: z.string().transform((value) => value.length),
      codec: z.codec(z.iso.datetime(), z.date(), {
        decode: (text) => new Date(text),
        encode: (date) => date.toISOString(),
      }),
      promise: z.promise(z.string()),
      success: z.success(z.string()),
      custom: z.custom<string>((value) => typeof value === 'string'),
      file: z.file(),
      fn: z.function(),
    }),
    references: z.object({ tree, first: shared, second: shared }),
    meta: z.string().meta({ title: 'Title', description: 'Described', examples: ['e'] }),
  };
}
