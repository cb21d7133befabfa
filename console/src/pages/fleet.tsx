// Fleet: devices online and offline with last seen and owner, agents, MCP servers (shadow and never called). The
// device list's status filter and keyset cursor are kept in the URL.
import type { components } from '../../../client/api.ts';
import { mcpSourceText } from '../../../client/mcp-source.ts';
import { Badge, Empty, formatNumber, formatTime, isNew, Show, useLoad } from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

const STATUSES = ['online', 'offline', 'never_reported'] as const;
type McpSource = components['schemas']['McpSourceIdentity'];

/** Where an MCP server name comes from across the fleet: what tells the official server from a fork of its name. */
const sourcesText = (sources: readonly McpSource[], truncated: boolean): string =>
  sources.length === 0 ? '—' : `${sources.map(mcpSourceText).join(', ')}${truncated ? ', …' : ''}`;
type Status = (typeof STATUSES)[number];

export function FleetPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const requested = query.get('status') as Status;
  const status = STATUSES.includes(requested) ? requested : undefined;
  const cursor = query.get('cursor') ?? undefined;
  const summary = useLoad('summary', () => client.GET('/v1/admin/fleet/summary'));
  const devices = useLoad(`devices:${status}:${cursor}`, () =>
    client.GET('/v1/admin/devices', {
      params: {
        query: {
          limit: 100,
          sort: '-last_seen',
          ...(status ? { status } : {}),
          ...(cursor ? { cursor } : {}),
        },
      },
    }),
  );
  const agents = useLoad('agents', () =>
    client.GET('/v1/admin/agents', { params: { query: { limit: 100 } } }),
  );
  const mcps = useLoad('mcps', () => client.GET('/v1/admin/mcps', { params: { query: { limit: 100 } } }));
  return (
    <>
      <h1>Fleet</h1>
      <section aria-labelledby="devices-counts">
        <h2 id="devices-counts">Devices</h2>
        <Show loaded={summary} what="the fleet summary">
          {({ data }) => (
            <dl class="numbers" id="fleet-counts">
              {(['total', 'online', 'offline', 'never_reported', 'new_24h'] as const).map((k) => (
                <div key={k}>
                  <dt>{k === 'never_reported' ? 'never reported' : k === 'new_24h' ? 'new (24 h)' : k}</dt>
                  <dd data-count={k}>{formatNumber(data.devices[k])}</dd>
                </div>
              ))}
            </dl>
          )}
        </Show>
        <div class="filters">
          <label>
            Status
            <select
              id="device-status"
              value={status ?? ''}
              onChange={(e) => navigate(pageUrl('/', { status: e.currentTarget.value }))}
            >
              <option value="">any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s.replace('_', ' ')}
                </option>
              ))}
            </select>
          </label>
        </div>
        <Show loaded={devices} what="devices">
          {({ data }) =>
            data.devices.length === 0 ? (
              <Empty>
                {status
                  ? `No device is ${status.replace('_', ' ')}.`
                  : 'No device has enrolled yet. Enroll one with `npm run agent -- register`.'}
              </Empty>
            ) : (
              <>
                <table id="devices">
                  <caption>
                    {data.devices.length} devices{cursor ? ' on this page' : ''}, last seen first; online
                    means seen within {Math.round(data.online_threshold_seconds / 60)} minutes
                  </caption>
                  <thead>
                    <tr>
                      <th scope="col">Serial</th>
                      <th scope="col">Model</th>
                      <th scope="col">Status</th>
                      <th scope="col">Last seen</th>
                      <th scope="col">Owner</th>
                      <th scope="col">Agents</th>
                      <th scope="col">MCP servers</th>
                      <th scope="col">Agent version</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.devices.map((d) => (
                      <tr key={d.id} class={isNew(d.created_at) ? 'new' : undefined}>
                        <td>
                          {d.serial_number}
                          {isNew(d.created_at) && <Badge kind="new">new</Badge>}
                        </td>
                        <td>
                          {d.brand} {d.model}
                        </td>
                        <td>
                          <span class={`status ${d.status}`}>{d.status.replace('_', ' ')}</span>
                        </td>
                        <td>{formatTime(d.last_seen_at)}</td>
                        <td>{d.owner_email || d.owner_subject}</td>
                        <td class="num">{d.agents}</td>
                        <td class="num">{d.mcps}</td>
                        <td>{d.agent_version ?? '—'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
                <nav class="pager" aria-label="Device pages">
                  {cursor && (
                    <button type="button" onClick={() => navigate(pageUrl('/', { status }))}>
                      First page
                    </button>
                  )}
                  {data.next_cursor && (
                    <button
                      type="button"
                      onClick={() =>
                        navigate(pageUrl('/', { status, cursor: data.next_cursor ?? undefined }))
                      }
                    >
                      Next page
                    </button>
                  )}
                </nav>
              </>
            )
          }
        </Show>
      </section>
      <section aria-labelledby="agents-title">
        <h2 id="agents-title">Agents</h2>
        <Show loaded={agents} what="agents">
          {({ data }) =>
            data.agents.length === 0 ? (
              <Empty>No agent has been reported by any device.</Empty>
            ) : (
              <table id="agents">
                <thead>
                  <tr>
                    <th scope="col">Agent</th>
                    <th scope="col">Devices</th>
                    <th scope="col">MCP servers</th>
                    <th scope="col">Calls</th>
                    <th scope="col">Denied</th>
                    <th scope="col">First seen</th>
                    <th scope="col">Last seen</th>
                  </tr>
                </thead>
                <tbody>
                  {data.agents.map((a) => (
                    <tr key={a.agent_type} class={isNew(a.first_seen_at) ? 'new' : undefined}>
                      <td>
                        {a.agent_type}
                        {isNew(a.first_seen_at) && <Badge kind="new">new</Badge>}
                      </td>
                      <td class="num">{formatNumber(a.devices)}</td>
                      <td class="num">{formatNumber(a.mcps.distinct)}</td>
                      <td class="num">{formatNumber(a.calls)}</td>
                      <td class="num">{formatNumber(a.denied)}</td>
                      <td>{formatTime(a.first_seen_at)}</td>
                      <td>{formatTime(a.last_seen_at)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Show>
      </section>
      <section aria-labelledby="mcps-title">
        <h2 id="mcps-title">MCP servers</h2>
        <Show loaded={mcps} what="MCP servers">
          {({ data }) => (
            <>
              {data.mcps.length === 0 ? (
                <Empty>No MCP server is configured on any device.</Empty>
              ) : (
                <table id="mcps">
                  <caption>Calls over the last 7 days</caption>
                  <thead>
                    <tr>
                      <th scope="col">MCP server</th>
                      <th scope="col">Devices</th>
                      <th scope="col">Transports</th>
                      <th scope="col">Calls</th>
                      <th scope="col">Denied</th>
                      <th scope="col">First seen</th>
                      <th scope="col">Last seen</th>
                      <th scope="col">Sources</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.mcps.map((m) => (
                      <tr key={m.name} class={isNew(m.first_seen_at) ? 'new' : undefined}>
                        <td>
                          {m.name}
                          {isNew(m.first_seen_at) && <Badge kind="new">new</Badge>}
                          {m.usage === 'configured_never_called' && (
                            <Badge kind="never-called" quiet>
                              never called
                            </Badge>
                          )}
                        </td>
                        <td class="num">{formatNumber(m.devices)}</td>
                        <td>{m.transports.join(', ')}</td>
                        <td class="num">{formatNumber(m.calls)}</td>
                        <td class="num">{formatNumber(m.denied)}</td>
                        <td>{formatTime(m.first_seen_at)}</td>
                        <td>{formatTime(m.last_seen_at)}</td>
                        <td>{sourcesText(m.sources, m.sources_truncated)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <h3>Shadow MCP servers (called, configured nowhere)</h3>
              {data.shadow.length === 0 ? (
                <Empty>None: every MCP server called in the last 7 days is configured on some device.</Empty>
              ) : (
                <ul id="shadow-mcps">
                  {data.shadow.map((s) => (
                    <li key={s.name}>
                      <strong>{s.name}</strong>: {formatNumber(s.calls)} calls, {formatNumber(s.denied)}{' '}
                      denied
                    </li>
                  ))}
                </ul>
              )}
              <h3>Configured, never called (7 days)</h3>
              {data.configured_never_called.length === 0 ? (
                <Empty>None: every configured MCP server was called.</Empty>
              ) : (
                <ul id="never-called-mcps">
                  {data.configured_never_called.map((s) => (
                    <li key={s.name}>
                      {s.name} ({formatNumber(s.devices)} devices)
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </Show>
      </section>
    </>
  );
}
