// Splunk HTTP Event Collector: POST /services/collector/event with `Authorization: Splunk <token>` and the batch as
// concatenated event objects ({time, host, source, sourcetype, index, event}), as Splunk documents for batching.
import type { ExportSource } from '../source.ts';
import type { Destination } from './destination.ts';
import { postBatch } from './post.ts';
import type { SplunkHecSettings } from './settings.ts';
import { shapeOf } from './shapes.ts';

export const HEC_PATH = '/services/collector/event';

/** The batch as HEC's event JSON: one envelope per event, one after another. */
export function hecBody(settings: SplunkHecSettings): (batch: readonly ExportSource[]) => string {
  const shape = shapeOf(settings.shape);
  const envelope = (source: ExportSource) => ({
    // Epoch seconds with milliseconds, as HEC takes them.
    time: Date.parse(source.event.event_time) / 1000,
    host: source.event.serial_number,
    source: settings.source,
    sourcetype: settings.sourcetype,
    ...(settings.index === undefined ? {} : { index: settings.index }),
    event: shape(source),
  });
  return (batch) => {
    let body = '';
    for (const source of batch) body += JSON.stringify(envelope(source));
    return body;
  };
}

export function splunkHecDestination(
  settings: SplunkHecSettings,
  token: string,
  timeoutMs: number,
): Destination {
  const url = `${settings.url.replace(/\/+$/, '')}${HEC_PATH}`;
  const body = hecBody(settings);
  return {
    kind: 'splunk_hec',
    send(batch, signal) {
      return postBatch({
        url,
        headers: { 'content-type': 'application/json', authorization: `Splunk ${token}` },
        body: body(batch),
        timeoutMs,
        signal,
      });
    },
  };
}
