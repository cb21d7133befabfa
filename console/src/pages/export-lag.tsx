// Export destinations and how far behind each one is (docs/exports.md), shown on the Alerts page: a destination that
// stays down builds lag, which the stack's ExportLag alarm watches too: the tool calls' and each class stream's the
// destination takes. Read from the admin API (the list, then each
// destination's status); nothing is shown while there is no destination.
import type { components } from '../../../client/api.ts';
import {
  type ApiResult,
  Badge,
  ColumnHeads,
  formatNumber,
  formatTime,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { api, type Session } from '../session.ts';

type Destination = components['schemas']['ExportDestination'];
type Status = components['schemas']['ExportDestinationStatus'];
type ClassKey = components['schemas']['ExportClassStatus']['class'];
interface Row {
  destination: Destination;
  status: Status;
}

const KIND_NAMES: Record<Destination['kind'], string> = {
  otlp_http: 'OTLP/HTTP',
  splunk_hec: 'Splunk HEC',
  webhook: 'Webhook',
  security_lake: 'Security Lake',
};

/** The OCSF class streams other than the tool calls, as the lag cell names them. */
const CLASS_NAMES: Record<ClassKey, string> = {
  deviceInventory: 'Device inventory',
  softwareInventory: 'Software inventory',
  userAccess: 'User access',
  datastoreActivity: 'Datastore activity',
  detectionFinding: 'Detection findings',
};

const count = (n: number, one: string, many: string) => `${formatNumber(n)} ${n === 1 ? one : many}`;

/** Whole seconds, with minutes, hours or days beside them once they reach one. */
export function formatLag(seconds: number): string {
  const s = Math.round(seconds);
  const [unit, size] =
    s >= 86_400 ? ['d', 86_400] : s >= 3_600 ? ['h', 3_600] : s >= 60 ? ['min', 60] : ['', 1];
  return unit ? `${formatNumber(s)} s (${(s / size).toFixed(1)} ${unit})` : `${formatNumber(s)} s`;
}

async function loadRows(client: ReturnType<typeof api>): Promise<ApiResult<Row[]>> {
  const list = await client.GET('/v1/admin/exports/destinations');
  if (!list.data) return list as ApiResult<Row[]>;
  const statuses = await Promise.all(
    list.data.data.destinations.map((d) =>
      client.GET('/v1/admin/exports/destinations/{id}', { params: { path: { id: d.id } } }),
    ),
  );
  const failed = statuses.find((s) => !s.data);
  if (failed) return failed as ApiResult<Row[]>;
  return { data: statuses.map((s) => s.data!.data), response: list.response };
}

export function ExportLag({ session }: { session: Session }) {
  const client = api(session);
  const rows = useLoad('export-destinations', () => loadRows(client));
  return (
    <Show loaded={rows} what="export destinations">
      {(data) =>
        data.length === 0 ? null : (
          <section aria-labelledby="exports-title">
            <h2 id="exports-title">Export destinations</h2>
            <TableScroll>
              <table id="export-lag">
                <caption>
                  Lag: the age of the oldest event a destination has not received (tool calls), then of each
                  other OCSF class it takes
                </caption>
                <ColumnHeads
                  names={['Destination', 'Kind', 'Enabled', 'Cursor', 'Lag', 'Last error', 'Last delivery']}
                />
                <tbody>
                  {data.map(({ destination: d, status: s }) => (
                    <tr key={d.id} data-destination={d.name}>
                      <td>{d.name}</td>
                      <td>{KIND_NAMES[d.kind]}</td>
                      <td>
                        {d.enabled ? 'yes' : 'no'}
                        {!d.enabled && (
                          <Badge kind="disabled" quiet>
                            not sent
                          </Badge>
                        )}
                      </td>
                      <td>
                        <code class="cursor">{s.cursor}</code>
                      </td>
                      <td class="num lag">
                        {formatLag(s.lag_seconds)}
                        <br />
                        {count(s.lag_events, 'event', 'events')}
                        {s.classes.some((c) => c.sent) && (
                          <ul class="class-lag">
                            {s.classes
                              .filter((c) => c.sent)
                              .map((c) => (
                                <li key={c.class} data-class={c.class}>
                                  {CLASS_NAMES[c.class]}: {formatLag(c.lag_seconds)},{' '}
                                  {count(c.lag_records, 'record', 'records')}
                                </li>
                              ))}
                          </ul>
                        )}
                      </td>
                      <td class="last-error">
                        {s.last_error ?? '—'}
                        {s.last_error && s.last_error_permanent && (
                          <Badge kind="permanent">needs a change</Badge>
                        )}
                      </td>
                      <td class="time">{formatTime(s.last_success_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          </section>
        )
      }
    </Show>
  );
}
