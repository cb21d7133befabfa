// What a JSON receiver (HEC, webhook) gets for one event: OCSF, or the stored event itself.
import { toOcsfApiActivity } from '../ocsf.ts';
import type { ExportSource } from '../source.ts';

export type JsonShape = 'ocsf' | 'event';

export const shapeOf = (shape: JsonShape) =>
  shape === 'ocsf' ? toOcsfApiActivity : (source: ExportSource): unknown => source.event;
