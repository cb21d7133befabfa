// Catalog: the entries (filtered by datasource, kept in the URL), a new entry, and an entry's text fields edited.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import type { components } from '../../../client/api.ts';
import {
  describeError,
  Empty,
  FilterFold,
  formatTime,
  OffsetPager,
  Show,
  TableScroll,
  useLoad,
} from '../load.tsx';
import { navigate, pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type Entry = components['schemas']['CatalogEntry'];
const PAGE = 50;
const TEXT_FIELDS = [
  { name: 'target_name', label: 'Target name' },
  { name: 'target_location', label: 'Target location' },
  { name: 'summary', label: 'Summary' },
  { name: 'scan_policy', label: 'Scan policy' },
] as const;
type TextField = (typeof TEXT_FIELDS)[number]['name'];

export function CatalogPage({ session, query }: { session: Session; query: URLSearchParams }) {
  const client = api(session);
  const [version, setVersion] = useState(0);
  const datasource = query.get('datasource_name') ?? undefined;
  const offset = Math.max(0, Number(query.get('offset')) || 0);
  const open = query.get('entry') ?? undefined;
  const list = useLoad(`${datasource}:${offset}:${version}`, () =>
    client.GET('/v1/catalog', {
      params: {
        query: {
          limit: PAGE,
          offset,
          sort: 'datasource_name',
          ...(datasource ? { datasource_name: datasource } : {}),
        },
      },
    }),
  );
  const state = { datasource_name: datasource, offset: offset ? String(offset) : undefined, entry: open };
  const go = (changes: Record<string, string | undefined>) =>
    navigate(pageUrl('/catalog', { ...state, ...changes }));
  const changed = (entry: Entry) => {
    setVersion((v) => v + 1);
    go({ entry: entry.id });
  };
  return (
    <>
      <h1>Catalog</h1>
      <FilterFold>
        <form
          class="filters"
          onSubmit={(e) => {
            e.preventDefault();
            const value = String(new FormData(e.currentTarget).get('datasource_name') ?? '').trim();
            navigate(pageUrl('/catalog', { datasource_name: value || undefined }));
          }}
        >
          <label key={datasource ?? ''}>
            Datasource
            <input name="datasource_name" value={datasource ?? ''} />
          </label>
          <div class="actions">
            <button type="submit">Apply filter</button>
            <button type="button" class="secondary" id="new-entry" onClick={() => go({ entry: 'new' })}>
              New entry
            </button>
          </div>
        </form>
      </FilterFold>
      <div class="split">
        <section aria-label="Catalog entries">
          <Show loaded={list} what="the catalog">
            {({ data }) =>
              data.entries.length === 0 ? (
                <Empty>{datasource ? `No catalog entry for ${datasource}.` : 'The catalog is empty.'}</Empty>
              ) : (
                <>
                  <TableScroll>
                    <table id="catalog">
                      <caption>
                        {offset + 1}–{offset + data.entries.length} of {data.total}, by datasource
                      </caption>
                      <thead>
                        <tr>
                          <th scope="col">Target</th>
                          <th scope="col">Datasource</th>
                          <th scope="col">Location</th>
                          <th scope="col">Summary</th>
                          <th scope="col">Updated</th>
                        </tr>
                      </thead>
                      <tbody>
                        {data.entries.map((entry) => (
                          <tr key={entry.id} class={entry.id === open ? 'selected' : undefined}>
                            <td>
                              <a
                                class="entry-link"
                                href={pageUrl('/catalog', { ...state, entry: entry.id })}
                                onClick={(e) => {
                                  e.preventDefault();
                                  go({ entry: entry.id });
                                }}
                              >
                                {entry.target_name || '(unnamed)'}
                              </a>
                            </td>
                            <td>{entry.datasource_name}</td>
                            <td>{entry.target_location || '—'}</td>
                            <td>{entry.summary || '—'}</td>
                            <td class="time">{formatTime(entry.updated_at)}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </TableScroll>
                  <OffsetPager
                    offset={offset}
                    page={PAGE}
                    shown={data.entries.length}
                    total={data.total}
                    go={go}
                  />
                </>
              )
            }
          </Show>
        </section>
        {open === 'new' && (
          <NewEntry session={session} onSaved={changed} onClose={() => go({ entry: undefined })} />
        )}
        {open && open !== 'new' && (
          <EditEntry
            key={`${open}:${version}`}
            session={session}
            id={open}
            onSaved={changed}
            onClose={() => go({ entry: undefined })}
          />
        )}
      </div>
    </>
  );
}

function texts(form: HTMLFormElement): Record<TextField, string> {
  const data = new FormData(form);
  const out = {} as Record<TextField, string>;
  for (const { name } of TEXT_FIELDS) out[name] = String(data.get(name) ?? '').trim();
  return out;
}

function Panel({
  title,
  onClose,
  children,
}: {
  title: string;
  onClose: () => void;
  children: ComponentChildren;
}) {
  return (
    <aside id="catalog-entry" class="card" aria-labelledby="catalog-entry-title">
      <h2 id="catalog-entry-title">{title}</h2>
      <button type="button" class="close" onClick={onClose}>
        Close
      </button>
      {children}
    </aside>
  );
}

function EntryFields({ entry }: { entry?: Entry }) {
  return (
    <>
      {TEXT_FIELDS.map(({ name, label }) => (
        <label key={name}>
          {label}
          <input name={name} id={`entry-${name}`} value={entry?.[name] ?? ''} />
        </label>
      ))}
    </>
  );
}

function NewEntry({
  session,
  onSaved,
  onClose,
}: {
  session: Session;
  onSaved: (e: Entry) => void;
  onClose: () => void;
}) {
  const [message, setMessage] = useState('');
  return (
    <Panel title="New catalog entry" onClose={onClose}>
      <form
        class="entry"
        onSubmit={async (e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          const { data, error, response } = await api(session).POST('/v1/admin/catalog', {
            body: {
              datasource_id: String(form.get('datasource_id') ?? '').trim(),
              datasource_name: String(form.get('datasource_name') ?? '').trim(),
              ...texts(e.currentTarget),
            },
          });
          if (data) onSaved(data.data);
          else setMessage(describeError(error, response.status));
        }}
      >
        <label>
          Datasource id
          <input name="datasource_id" id="entry-datasource_id" required />
        </label>
        <label>
          Datasource name
          <input name="datasource_name" id="entry-datasource_name" required />
        </label>
        <EntryFields />
        <button type="submit" id="save-entry">
          Create
        </button>
        <p class="error" role="alert">
          {message}
        </p>
      </form>
    </Panel>
  );
}

function EditEntry({
  session,
  id,
  onSaved,
  onClose,
}: {
  session: Session;
  id: string;
  onSaved: (e: Entry) => void;
  onClose: () => void;
}) {
  const [message, setMessage] = useState('');
  const loaded = useLoad(`entry:${id}`, () =>
    api(session).GET('/v1/catalog/{id}', { params: { path: { id } } }),
  );
  return (
    <Panel title="Catalog entry" onClose={onClose}>
      <Show loaded={loaded} what="the entry">
        {({ data: entry }) => (
          <form
            class="entry"
            onSubmit={async (e) => {
              e.preventDefault();
              const { data, error, response } = await api(session).PATCH('/v1/admin/catalog/{id}', {
                params: { path: { id } },
                body: texts(e.currentTarget),
              });
              if (data) {
                setMessage('');
                onSaved(data);
              } else setMessage(describeError(error, response.status));
            }}
          >
            <p>
              {entry.datasource_name} ({entry.datasource_id}); the schema and metadata are edited through the
              API.
            </p>
            <EntryFields entry={entry} />
            <button type="submit" id="save-entry">
              Save
            </button>
            <p class="error" role="alert">
              {message}
            </p>
          </form>
        )}
      </Show>
    </Panel>
  );
}
