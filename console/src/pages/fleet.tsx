// Fleet: the device counts, then three tabs kept in the URL with every filter: the devices (search, owner, agent,
// MCP server, last seen, sortable columns, keyset pages), the agents and the MCP servers (shadow and never called),
// whose device counts link to the devices they count. A device opens on its own page (device.tsx).
import type { components, operations } from '../../../client/api.ts';
import { mcpSourceText } from '../../../client/mcp-source.ts';
import { PageLink } from '../link.tsx';
import {
  Badge,
  ChoiceSelect,
  Empty,
  FilterFold,
  formatNumber,
  formatTime,
  isNew,
  RelativeTime,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

const STATUSES = ['online', 'offline', 'never_reported'] as const;
type McpSource = components['schemas']['McpSourceIdentity'];
type DeviceQuery = NonNullable<operations['obsListDevices']['parameters']['query']>;
type DeviceSort = NonNullable<DeviceQuery['sort']>;

/** Where an MCP server name comes from across the fleet: what tells the official server from a fork of its name. */
const sourcesText = (sources: readonly McpSource[], truncated: boolean): string =>
  sources.length === 0 ? '—' : `${sources.map(mcpSourceText).join(', ')}${truncated ? ', …' : ''}`;
type Status = (typeof STATUSES)[number];

const TABS = [
  { id: 'devices', label: 'Devices' },
  { id: 'agents', label: 'Agents' },
  { id: 'mcps', label: 'MCP servers' },
] as const;
type Tab = (typeof TABS)[number]['id'];

/** "Not seen for": the last_seen_before the API takes, from now; `custom` is a date the admin picks. */
const NOT_SEEN = [
  { id: '1d', label: '1 day', days: 1 },
  { id: '7d', label: '7 days', days: 7 },
  { id: '30d', label: '30 days', days: 30 },
] as const;

/** The device filters the page keeps in its URL, with the names of the API's query. */
const DEVICE_FILTERS = [
  'q',
  'owner',
  'agent_type',
  'mcp',
  'status',
  'not_seen',
  'not_seen_since',
  'sort',
] as const;
type DeviceFilters = Partial<Record<(typeof DEVICE_FILTERS)[number], string>>;

function deviceFiltersOf(query: URLSearchParams): DeviceFilters {
  const out: DeviceFilters = {};
  for (const name of DEVICE_FILTERS) {
    const value = query.get(name);
    if (value) out[name] = value;
  }
  return out;
}

/** The API's last_seen_before for the page's "not seen for" choice, or none. */
function lastSeenBefore(filters: DeviceFilters, now: number): string | undefined {
  const preset = NOT_SEEN.find((p) => p.id === filters.not_seen);
  if (preset) return new Date(now - preset.days * 86_400_000).toISOString();
  if (
    filters.not_seen === 'custom' &&
    filters.not_seen_since &&
    !Number.isNaN(Date.parse(filters.not_seen_since))
  ) {
    return new Date(`${filters.not_seen_since}T00:00:00Z`).toISOString();
  }
  return undefined;
}

/** The columns a device list sorts on, and the API's sort for each direction. */
const SORTABLE: Record<string, { asc: DeviceSort; desc: DeviceSort }> = {
  serial: { asc: 'serial', desc: '-serial' },
  last_seen: { asc: 'last_seen', desc: '-last_seen' },
  created: { asc: 'created', desc: '-created' },
};

function SortHeader({
  column,
  label,
  sort,
  go,
}: {
  column: keyof typeof SORTABLE;
  label: string;
  sort: DeviceSort;
  go: (changes: DeviceFilters) => void;
}) {
  const { asc, desc } = SORTABLE[column] as { asc: DeviceSort; desc: DeviceSort };
  const current = sort === asc ? 'ascending' : sort === desc ? 'descending' : undefined;
  return (
    <th scope="col" aria-sort={current ?? 'none'}>
      <button
        type="button"
        class="sort"
        data-sort={column}
        onClick={() => go({ sort: current === 'descending' ? asc : desc })}
      >
        {label}
        <span aria-hidden="true">
          {current === 'ascending' ? ' ▲' : current === 'descending' ? ' ▼' : ''}
        </span>
      </button>
    </th>
  );
}

export function FleetPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const tab: Tab = TABS.some((t) => t.id === query.get('tab')) ? (query.get('tab') as Tab) : 'devices';
  const filters = deviceFiltersOf(query);
  const status = STATUSES.includes(filters.status as Status) ? (filters.status as Status) : undefined;
  const sort = (
    Object.values(SORTABLE).some((s) => s.asc === filters.sort || s.desc === filters.sort)
      ? filters.sort
      : '-last_seen'
  ) as DeviceSort;
  const cursor = query.get('cursor') ?? undefined;
  const before = lastSeenBefore(filters, Date.now());
  const deviceQuery: DeviceQuery = {
    limit: 100,
    sort,
    ...(filters.q ? { q: filters.q } : {}),
    ...(filters.owner ? { owner: filters.owner } : {}),
    ...(filters.agent_type ? { agent_type: filters.agent_type } : {}),
    ...(filters.mcp ? { mcp: filters.mcp } : {}),
    ...(status ? { status } : {}),
    ...(before ? { last_seen_before: before } : {}),
    ...(cursor ? { cursor } : {}),
  };
  const filtered = DEVICE_FILTERS.some((f) => f !== 'sort' && filters[f]);
  const go = (changes: DeviceFilters) =>
    navigate(pageUrl('/', { ...filters, ...changes, cursor: undefined }));
  const summary = useLoad('summary', () => client.GET('/v1/admin/fleet/summary'));
  // Keyed on the choice, not on the time it gives (which moves with every render).
  const devicesKey = JSON.stringify({
    ...deviceQuery,
    last_seen_before: [filters.not_seen, filters.not_seen_since],
  });
  const devices = useLoad(`devices:${devicesKey}`, () =>
    client.GET('/v1/admin/devices', { params: { query: deviceQuery } }),
  );
  const agents = useLoad('agents', () =>
    client.GET('/v1/admin/agents', { params: { query: { limit: 100 } } }),
  );
  const mcps = useLoad('mcps', () => client.GET('/v1/admin/mcps', { params: { query: { limit: 100 } } }));
  return (
    <>
      <h1>Fleet</h1>
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
      <nav class="fleet-tabs" aria-label="Fleet views">
        {TABS.map((t) => (
          <PageLink
            key={t.id}
            id={`tab-${t.id}`}
            class="tab"
            to={pageUrl('/', { ...filters, tab: t.id === 'devices' ? undefined : t.id })}
            aria-current={t.id === tab ? 'page' : undefined}
          >
            {t.label}
          </PageLink>
        ))}
      </nav>
      {tab === 'devices' && (
        <section aria-labelledby="devices-title">
          <h2 id="devices-title">Devices</h2>
          <FilterFold>
            <form
              id="device-filters"
              class="filters"
              onSubmit={(e) => {
                e.preventDefault();
                const form = new FormData(e.currentTarget);
                const text = (name: string) => String(form.get(name) ?? '').trim() || undefined;
                go({
                  q: text('q'),
                  owner: text('owner'),
                  agent_type: text('agent_type'),
                  mcp: text('mcp'),
                  status: text('status'),
                  not_seen: text('not_seen'),
                  not_seen_since: text('not_seen') === 'custom' ? text('not_seen_since') : undefined,
                });
              }}
            >
              <label>
                Search
                <input
                  id="device-search"
                  name="q"
                  type="search"
                  value={filters.q ?? ''}
                  placeholder="serial, model or owner"
                />
              </label>
              <label>
                Owner
                <input id="device-owner" name="owner" value={filters.owner ?? ''} placeholder="email" />
              </label>
              <label htmlFor="device-agent">
                Agent
                <ChoiceSelect
                  id="device-agent"
                  name="agent_type"
                  value={filters.agent_type}
                  choices={
                    agents.state === 'ready'
                      ? agents.data.data.agents.map((a) => ({ value: a.agent_type }))
                      : undefined
                  }
                />
              </label>
              <label htmlFor="device-mcp">
                MCP server
                <ChoiceSelect
                  id="device-mcp"
                  name="mcp"
                  value={filters.mcp}
                  choices={
                    mcps.state === 'ready'
                      ? [...new Set(mcps.data.data.mcps.map((m) => m.name))].map((value) => ({ value }))
                      : undefined
                  }
                />
              </label>
              <label>
                Status
                <select
                  id="device-status"
                  name="status"
                  value={status ?? ''}
                  onChange={(e) => go({ status: e.currentTarget.value || undefined })}
                >
                  <option value="">any</option>
                  {STATUSES.map((s) => (
                    <option key={s} value={s}>
                      {s.replace('_', ' ')}
                    </option>
                  ))}
                </select>
              </label>
              <label>
                Not seen for
                <select id="device-not-seen" name="not_seen" value={filters.not_seen ?? ''}>
                  <option value="">any time</option>
                  {NOT_SEEN.map((p) => (
                    <option key={p.id} value={p.id}>
                      {p.label}
                    </option>
                  ))}
                  <option value="custom">since a date…</option>
                </select>
              </label>
              <label>
                Not seen since
                <input
                  id="device-not-seen-since"
                  name="not_seen_since"
                  type="date"
                  value={filters.not_seen_since ?? ''}
                />
              </label>
              <button type="submit">Filter</button>
              {filtered && (
                <button type="button" onClick={() => navigate(pageUrl('/', { sort: filters.sort }))}>
                  Clear
                </button>
              )}
            </form>
          </FilterFold>
          <Show loaded={devices} what="devices">
            {({ data }) =>
              data.devices.length === 0 ? (
                <Empty>
                  {filtered
                    ? status && DEVICE_FILTERS.every((f) => f === 'sort' || f === 'status' || !filters[f])
                      ? `No device is ${status.replace('_', ' ')}.`
                      : 'No device matches these filters.'
                    : 'No device has enrolled yet. Enroll one with `npm run agent -- register`.'}
                </Empty>
              ) : (
                <>
                  <TableScroll>
                    <table id="devices">
                      <caption>
                        {data.devices.length} devices{cursor || data.next_cursor ? ' on this page' : ''}
                        {'; '}online means seen within {Math.round(data.online_threshold_seconds / 60)}{' '}
                        minutes
                      </caption>
                      <thead>
                        <tr>
                          <SortHeader column="serial" label="Serial" sort={sort} go={go} />
                          <th scope="col">Model</th>
                          <th scope="col">Status</th>
                          <SortHeader column="last_seen" label="Last seen" sort={sort} go={go} />
                          <th scope="col">Owner</th>
                          <th scope="col">Agents</th>
                          <th scope="col">MCP servers</th>
                          <SortHeader column="created" label="Enrolled" sort={sort} go={go} />
                          <th scope="col">Agent version</th>
                        </tr>
                      </thead>
                      <tbody>
                        {data.devices.map((d) => (
                          <tr key={d.id} class={isNew(d.created_at) ? 'new' : undefined}>
                            <td>
                              <PageLink to={pageUrl(`/devices/${d.id}`)}>{d.serial_number}</PageLink>
                              {isNew(d.created_at) && <Badge kind="new">new</Badge>}
                            </td>
                            <td>
                              {d.brand} {d.model}
                            </td>
                            <td>
                              <span class={`status ${d.status}`}>{d.status.replace('_', ' ')}</span>
                            </td>
                            <td>
                              <RelativeTime iso={d.last_seen_at} />
                            </td>
                            <td>{d.owner_email || d.owner_subject}</td>
                            <td class="num">{d.agents}</td>
                            <td class="num">{d.mcps}</td>
                            <td>
                              <RelativeTime iso={d.created_at} />
                            </td>
                            <td>{d.agent_version ?? '—'}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableScroll>
                  <nav class="pager" aria-label="Device pages">
                    {cursor && (
                      <button type="button" onClick={() => go({})}>
                        First page
                      </button>
                    )}
                    {data.next_cursor && (
                      <button
                        type="button"
                        onClick={() =>
                          navigate(pageUrl('/', { ...filters, cursor: data.next_cursor ?? undefined }))
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
      )}
      {tab === 'agents' && (
        <section aria-labelledby="agents-title">
          <h2 id="agents-title">Agents</h2>
          <Show loaded={agents} what="agents">
            {({ data }) =>
              data.agents.length === 0 ? (
                <Empty>No agent has been reported by any device.</Empty>
              ) : (
                <TableScroll>
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
                          <td class="num">
                            <DevicesLink count={a.devices} filter={{ agent_type: a.agent_type }} />
                          </td>
                          <td class="num">{formatNumber(a.mcps.distinct)}</td>
                          <td class="num">{formatNumber(a.calls)}</td>
                          <td class="num">{formatNumber(a.denied)}</td>
                          <td>{formatTime(a.first_seen_at)}</td>
                          <td>{formatTime(a.last_seen_at)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </TableScroll>
              )
            }
          </Show>
        </section>
      )}
      {tab === 'mcps' && (
        <section aria-labelledby="mcps-title">
          <h2 id="mcps-title">MCP servers</h2>
          <Show loaded={mcps} what="MCP servers">
            {({ data }) => (
              <>
                {data.mcps.length === 0 ? (
                  <Empty>No MCP server is configured on any device.</Empty>
                ) : (
                  <TableScroll>
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
                            <td class="num">
                              <DevicesLink count={m.devices} filter={{ mcp: m.name }} />
                            </td>
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
                  </TableScroll>
                )}
                <h3>Shadow MCP servers (called, configured nowhere)</h3>
                {data.shadow.length === 0 ? (
                  <Empty>
                    None: every MCP server called in the last 7 days is configured on some device.
                  </Empty>
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
      )}
    </>
  );
}

/** A count of devices that opens the device list those devices make up. */
function DevicesLink({ count, filter }: { count: number; filter: DeviceFilters }) {
  return (
    <PageLink to={pageUrl('/', filter)} data-devices-link>
      {formatNumber(count)}
    </PageLink>
  );
}
