// Alerts as EventBridge events (docs/policy.md, "EventBridge"): one PutEvents entry per alert delivery, through the
// AWS SDK (loaded only when a bus is configured, so the other functions never bundle it).
import type { Config } from '../core/config/schema.ts';
import type { AlertView } from './schemas.ts';

/** The destination name of EventBridge deliveries in alert_deliveries. */
export const EVENTBRIDGE_DESTINATION = 'eventbridge';
export const ALERT_EVENT_SOURCE = 'acp.alerts';
export const ALERT_DETAIL_TYPE = 'Fleet Alert Opened';

type EventBridgeConfig = Config['alerts']['eventbridge'];
let client: { config: EventBridgeConfig; send: (entry: object) => Promise<string | null> } | undefined;

async function clientFor(config: EventBridgeConfig) {
  if (client?.config === config) return client;
  const { EventBridgeClient, PutEventsCommand } = await import('@aws-sdk/client-eventbridge');
  const region = config.region || process.env.AWS_REGION || 'us-east-1';
  const sdk = new EventBridgeClient(config.endpoint ? { region, endpoint: config.endpoint } : { region });
  client = {
    config,
    send: async (entry) => {
      const out = await sdk.send(new PutEventsCommand({ Entries: [entry] }));
      const failed = out.Entries?.[0];
      return out.FailedEntryCount ? `EventBridge ${failed?.ErrorCode ?? 'failed'}` : null;
    },
  };
  return client;
}

/** Puts one alert event on the bus; returns null when it was accepted, else the error to record. */
export async function putAlertEvent(
  config: EventBridgeConfig,
  event: string,
  alert: AlertView,
): Promise<string | null> {
  const { send } = await clientFor(config);
  try {
    return await send({
      EventBusName: config.bus,
      Source: ALERT_EVENT_SOURCE,
      DetailType: ALERT_DETAIL_TYPE,
      Detail: JSON.stringify({ event, alert }),
    });
  } catch (err) {
    return `EventBridge ${(err as Error).name}`;
  }
}
