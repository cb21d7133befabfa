// One device: what it is and who owns it, the policy version it last fetched, its agents and MCP servers (with
// source and version), its latest tool calls, and its owner history (the audit log's device.* records for it: registered, key rotated, re-enrolled,
// released).
import { mcpSourceText } from '../../../client/mcp-source.ts';
import { PageLink } from '../link.tsx';
import { Empty, formatTime, RelativeTime, Show, TableScroll, useLoad } from '../load.tsx';
import { pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

const HISTORY: Record<string, string> = {
  'device.registered': 'registered',
  'device.key_rotated': 'key rotated by its owner',
  'device.re_enrolled': 're-enrolled',
  'device.released': 'released by an admin',
};

export function DevicePage({ session, id }: { session: Session; id: string }) {
  const client = api(session);
  const device = useLoad(`device:${id}`, () =>
    client.GET('/v1/admin/devices/{id}', { params: { path: { id } } }),
  );
  const history = useLoad(`device-history:${id}`, () =>
    client.GET('/v1/admin/audit-logs', {
      params: { query: { resource_id: id, sort: 'created_at', limit: 100 } },
    }),
  );
  const policy = usePolicyFetch(session, id);
  const link = (to: string, text: string) => <PageLink to={to}>{text}</PageLink>;
  return (
    <Show loaded={device} what="the device">
      {({ data }) => {
        const d = data.device;
        return (
          <>
            <p>{link(pageUrl('/'), '← Fleet')}</p>
            <h1>
              Device <span id="device-serial">{d.serial_number}</span>
            </h1>
            <dl class="facts" id="device-facts">
              <dt>Model</dt>
              <dd>
                {d.brand} {d.model}
              </dd>
              <dt>Status</dt>
              <dd>
                <span class={`status ${d.status}`}>{d.status.replace('_', ' ')}</span>
              </dd>
              <dt>Last seen</dt>
              <dd>
                <RelativeTime iso={d.last_seen_at} />
              </dd>
              <dt>Owner</dt>
              <dd>{data.owner.email || data.owner.subject}</dd>
              <dt>Enrolled</dt>
              <dd>{formatTime(d.created_at)}</dd>
              <dt>Agent version</dt>
              <dd>{d.agent_version ?? '—'}</dd>
              <dt>Policy</dt>
              <dd id="device-policy">
                <PolicyFetched loaded={policy} />
              </dd>
              <dt>Undelivered events</dt>
              <dd>
                {data.spool
                  ? `${data.spool.dropped} dropped, ${data.spool.torn} torn, ${data.spool.refused} refused`
                  : 'none reported'}
              </dd>
            </dl>
            <h2>Agents</h2>
            {data.agents.length === 0 ? (
              <Empty>No agent is reported on this device.</Empty>
            ) : (
              <TableScroll>
                <table id="device-agents">
                  <thead>
                    <tr>
                      <th scope="col">Agent</th>
                      <th scope="col">Version</th>
                      <th scope="col">Tool calls captured</th>
                      <th scope="col">Last seen</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.agents.map((a) => (
                      <tr key={a.agent_type}>
                        <td>{a.display_name || a.agent_type}</td>
                        <td>{a.version ?? '—'}</td>
                        <td>{a.capture === 'hooks' ? 'yes (hooks)' : a.capture === 'none' ? 'no' : '—'}</td>
                        <td>
                          <RelativeTime iso={a.last_seen_at} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            )}
            <h2>MCP servers</h2>
            {data.mcps.length === 0 ? (
              <Empty>No MCP server is configured on this device.</Empty>
            ) : (
              <TableScroll>
                <table id="device-mcps">
                  <thead>
                    <tr>
                      <th scope="col">MCP server</th>
                      <th scope="col">Agent</th>
                      <th scope="col">Scope</th>
                      <th scope="col">Source</th>
                      <th scope="col">Transport</th>
                      <th scope="col">Enabled</th>
                    </tr>
                  </thead>
                  <tbody>
                    {data.mcps.map((m) => (
                      <tr key={`${m.agent_type}/${m.name}/${m.scope}/${m.fingerprint}`}>
                        <td>{m.name}</td>
                        <td>{m.agent_type}</td>
                        <td>{m.scope ?? '—'}</td>
                        <td>{m.source ? mcpSourceText(m.source) : '—'}</td>
                        <td>{m.transport}</td>
                        <td>{m.enabled ? 'yes' : 'no'}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            )}
            <h2>Latest tool calls</h2>
            {data.recent_events.length === 0 ? (
              <Empty>No tool call from this device is stored.</Empty>
            ) : (
              <>
                <TableScroll>
                  <table id="device-events">
                    <thead>
                      <tr>
                        <th scope="col">Time</th>
                        <th scope="col">Result</th>
                        <th scope="col">Agent</th>
                        <th scope="col">MCP server</th>
                        <th scope="col">Tool</th>
                        <th scope="col">Duration</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.recent_events.map((e) => (
                        <tr key={e.id}>
                          <td>
                            {link(
                              pageUrl('/tool-calls', { device_id: d.id, event: e.id }),
                              formatTime(e.event_time),
                            )}
                          </td>
                          <td>{e.deny_code ? `${e.result} (${e.deny_code})` : e.result}</td>
                          <td>{e.agent_type}</td>
                          <td>{e.mcp_name}</td>
                          <td>{e.tool}</td>
                          <td class="num">{e.duration_ms} ms</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
                <p>{link(pageUrl('/tool-calls', { device_id: d.id }), 'All its tool calls')}</p>
              </>
            )}
            <h2>Owner history</h2>
            <Show loaded={history} what="its history">
              {({ data: audit }) => {
                const records = audit.logs.filter((l) => l.action_type in HISTORY);
                return records.length === 0 ? (
                  <Empty>No ownership change is recorded.</Empty>
                ) : (
                  <ol id="device-history">
                    {records.map((l) => (
                      <li key={l.id}>
                        {formatTime(l.created_at)}: {HISTORY[l.action_type]} ({l.actor_email || l.actor_id})
                      </li>
                    ))}
                  </ol>
                );
              }}
            </Show>
          </>
        );
      }}
    </Show>
  );
}

const usePolicyFetch = (session: Session, id: string) =>
  useLoad(`device-policy:${id}`, () =>
    api(session).GET('/v1/admin/policy/devices', { params: { query: { device_id: id, limit: 1 } } }),
  );

/** The policy version the device last fetched, and when; whether it is the one in force. */
function PolicyFetched({ loaded }: { loaded: ReturnType<typeof usePolicyFetch> }) {
  if (loaded.state !== 'ready') return <>…</>;
  const { current_version, devices } = loaded.data.data;
  const fetched = devices[0];
  if (!fetched || fetched.version === null) return <>never fetched (version {current_version} is in force)</>;
  return (
    <>
      version {fetched.version}
      {fetched.current ? ' (in force)' : `, not the one in force (${current_version})`}, fetched{' '}
      <RelativeTime iso={fetched.fetched_at} />
    </>
  );
}
