// Policy: the MCP policy in force, edited as a table of rules. Before it can be saved, the draft is checked three
// ways: validated (what a save would refuse, and warnings), compared with the version in force (diff), and run over
// the last 7 days of calls (dry run: calls per rule). Below, which version each device last fetched.
import { useState } from 'preact/hooks';
import type { components } from '../../../client/api.ts';
import { PageLink } from '../link.tsx';
import { describeError, Empty, formatNumber, RelativeTime, Show, TableScroll, useLoad } from '../load.tsx';
import { pageUrl } from '../router.ts';
import { api, type Session } from '../session.ts';

type PolicyDocument = components['schemas']['PolicyDocument'];
type Rule = PolicyDocument['rules'][number];
type Current = components['schemas']['PolicyVersion'];
type Check = {
  /** The draft these results are for (a later edit makes them stale). */
  draft: string;
  validation: components['schemas']['PolicyValidation'];
  diff?: components['schemas']['PolicyDiff'];
  dryRun?: components['schemas']['PolicyDryRun'];
};

const MATCH_FIELDS = ['group', 'actor', 'device_tag', 'agent_type', 'server', 'source', 'tool'] as const;

/** A rule's match as one line, `server=github tool=delete_*`: every field given, in the fields' order. */
const matchText = (match: Rule['match']) =>
  MATCH_FIELDS.filter((f) => match?.[f] !== undefined)
    .map((f) => `${f}=${match?.[f]}`)
    .join(' ');

/** The line back as a match; a word that is not `field=glob` of a known field is named. */
function parseMatch(text: string): { match: NonNullable<Rule['match']> } | { error: string } {
  const match: Record<string, string> = {};
  for (const word of text.trim().split(/\s+/).filter(Boolean)) {
    const at = word.indexOf('=');
    const field = word.slice(0, at);
    if (at < 1 || !(MATCH_FIELDS as readonly string[]).includes(field)) {
      return { error: `"${word}" is not field=glob (fields: ${MATCH_FIELDS.join(', ')})` };
    }
    match[field] = word.slice(at + 1);
  }
  return { match };
}

export function PolicyPage({ session }: { session: Session }) {
  const [reloads, setReloads] = useState(0);
  const current = useLoad(`policy:${reloads}`, () => api(session).GET('/v1/admin/policy'));
  return (
    <>
      <h1>Policy</h1>
      <Show loaded={current} what="the policy">
        {({ data }) => (
          <Editor
            key={data.version}
            session={session}
            current={data}
            onSaved={() => setReloads((n) => n + 1)}
          />
        )}
      </Show>
      <PolicyDevices session={session} reloads={reloads} />
    </>
  );
}

function Editor({ session, current, onSaved }: { session: Session; current: Current; onSaved: () => void }) {
  const client = api(session);
  const [draft, setDraft] = useState<PolicyDocument>(current.policy);
  const [matches, setMatches] = useState<string[]>(current.policy.rules.map((r) => matchText(r.match)));
  const [check, setCheck] = useState<Check>();
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState('');
  const [busy, setBusy] = useState(false);

  /** The draft with every match line parsed, or the first line that does not parse. */
  const built = (): { policy: PolicyDocument } | { error: string } => {
    const rules: Rule[] = [];
    for (const [i, rule] of draft.rules.entries()) {
      const parsed = parseMatch(matches[i] ?? '');
      if ('error' in parsed) return { error: `rule ${i + 1} (${rule.id}): ${parsed.error}` };
      rules.push({ ...rule, match: parsed.match });
    }
    return { policy: { ...draft, rules } };
  };
  const edit = (next: PolicyDocument, nextMatches = matches) => {
    setDraft(next);
    setMatches(nextMatches);
    setMessage('');
  };
  const setRule = (i: number, change: Partial<Rule>) =>
    edit({ ...draft, rules: draft.rules.map((r, j) => (j === i ? { ...r, ...change } : r)) });
  const move = (i: number, by: -1 | 1) => {
    const rules = [...draft.rules];
    const lines = [...matches];
    const j = i + by;
    [rules[i], rules[j]] = [rules[j] as Rule, rules[i] as Rule];
    [lines[i], lines[j]] = [lines[j] ?? '', lines[i] ?? ''];
    edit({ ...draft, rules }, lines);
  };
  const draftNow = built();
  const checked =
    check !== undefined && 'policy' in draftNow && check.draft === JSON.stringify(draftNow.policy);

  const runCheck = async () => {
    if ('error' in draftNow) return setMessage(draftNow.error);
    setBusy(true);
    const policy = draftNow.policy;
    const validated = await client.POST('/v1/admin/policy/validate', { body: { policy } });
    if (!validated.data) {
      setBusy(false);
      return setMessage(describeError(validated.error, validated.response.status));
    }
    const validation = validated.data.data;
    if (!validation.valid) {
      setBusy(false);
      return setCheck({ draft: JSON.stringify(policy), validation });
    }
    const [diff, dryRun] = await Promise.all([
      client.POST('/v1/admin/policy/diff', { body: { policy } }),
      client.POST('/v1/admin/policy/dry-run', { body: { policy, days: 7 } }),
    ]);
    setBusy(false);
    if (!diff.data) return setMessage(describeError(diff.error, diff.response.status));
    if (!dryRun.data) return setMessage(describeError(dryRun.error, dryRun.response.status));
    setCheck({ draft: JSON.stringify(policy), validation, diff: diff.data.data, dryRun: dryRun.data.data });
  };
  const save = async () => {
    if (!('policy' in draftNow)) return;
    setBusy(true);
    const saved = await client.PUT('/v1/admin/policy', {
      body: { policy: draftNow.policy, reason, base_version: current.version },
    });
    setBusy(false);
    if (saved.data) onSaved();
    else setMessage(describeError(saved.error, saved.response.status));
  };

  return (
    <section aria-labelledby="policy-title">
      <h2 id="policy-title">
        Version <span id="policy-version">{current.version}</span>
      </h2>
      <p class="state">
        {current.version === 0
          ? 'The built-in policy: nothing written yet, every call allowed.'
          : `Saved by ${current.created_by ?? '—'}: ${current.reason}`}
      </p>
      <TableScroll>
        <table id="policy-rules">
          <caption>Rules, first match decides (audit mode only reports)</caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">ID</th>
              <th scope="col">Effect</th>
              <th scope="col">Mode</th>
              <th scope="col">Match (field=glob …)</th>
              <th scope="col">Reason shown to the developer</th>
              <th scope="col">Order</th>
            </tr>
          </thead>
          <tbody>
            {draft.rules.map((rule, i) => (
              <tr key={i}>
                <td class="num">{i + 1}</td>
                <td>
                  <input
                    aria-label={`Rule ${i + 1} id`}
                    class="rule-id"
                    value={rule.id}
                    onInput={(e) => setRule(i, { id: e.currentTarget.value })}
                  />
                </td>
                <td>
                  <select
                    aria-label={`Rule ${i + 1} effect`}
                    class="rule-effect"
                    value={rule.effect}
                    onChange={(e) => setRule(i, { effect: e.currentTarget.value as Rule['effect'] })}
                  >
                    <option value="allow">allow</option>
                    <option value="deny">deny</option>
                  </select>
                </td>
                <td>
                  <select
                    aria-label={`Rule ${i + 1} mode`}
                    class="rule-mode"
                    value={rule.mode ?? 'enforce'}
                    onChange={(e) => setRule(i, { mode: e.currentTarget.value as Rule['mode'] })}
                  >
                    <option value="enforce">enforce</option>
                    <option value="audit">audit</option>
                  </select>
                </td>
                <td>
                  <input
                    aria-label={`Rule ${i + 1} match`}
                    class="rule-match"
                    value={matches[i] ?? ''}
                    onInput={(e) =>
                      edit(
                        draft,
                        matches.map((m, j) => (j === i ? e.currentTarget.value : m)),
                      )
                    }
                  />
                </td>
                <td>
                  <input
                    aria-label={`Rule ${i + 1} reason`}
                    class="rule-reason"
                    value={rule.reason}
                    onInput={(e) => setRule(i, { reason: e.currentTarget.value })}
                  />
                </td>
                <td class="actions">
                  <button type="button" disabled={i === 0} onClick={() => move(i, -1)}>
                    Up<span class="visually-hidden"> rule {i + 1}</span>
                  </button>
                  <button type="button" disabled={i === draft.rules.length - 1} onClick={() => move(i, 1)}>
                    Down<span class="visually-hidden"> rule {i + 1}</span>
                  </button>
                  <button
                    type="button"
                    onClick={() =>
                      edit(
                        { ...draft, rules: draft.rules.filter((_, j) => j !== i) },
                        matches.filter((_, j) => j !== i),
                      )
                    }
                  >
                    Remove<span class="visually-hidden"> rule {i + 1}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableScroll>
      <div class="actions">
        <button
          type="button"
          id="add-rule"
          onClick={() =>
            edit(
              {
                ...draft,
                rules: [
                  ...draft.rules,
                  {
                    id: `rule-${draft.rules.length + 1}`,
                    effect: 'deny',
                    mode: 'audit',
                    match: {},
                    reason: '',
                  },
                ],
              },
              [...matches, ''],
            )
          }
        >
          Add a rule
        </button>
      </div>
      <div class="filters">
        <label htmlFor="policy-default">
          No rule matches
          <select
            id="policy-default"
            value={draft.default.effect}
            onChange={(e) =>
              edit({
                ...draft,
                default: { ...draft.default, effect: e.currentTarget.value as Rule['effect'] },
              })
            }
          >
            <option value="allow">allow</option>
            <option value="deny">deny</option>
          </select>
        </label>
        <label htmlFor="policy-no-cache">
          A device with no usable copy
          <select
            id="policy-no-cache"
            value={draft.no_cache}
            onChange={(e) =>
              edit({ ...draft, no_cache: e.currentTarget.value as PolicyDocument['no_cache'] })
            }
          >
            <option value="open">lets calls through (open)</option>
            <option value="closed">denies them (closed)</option>
          </select>
        </label>
      </div>
      <div class="actions">
        <button type="button" id="check-policy" disabled={busy} onClick={runCheck}>
          Check: validate, diff, dry run
        </button>
      </div>
      <p class="error" role="alert" id="policy-message">
        {message}
      </p>
      {check && <CheckResults check={check} stale={!checked} />}
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          void save();
        }}
      >
        <label htmlFor="policy-reason">
          Why (kept with the version and audited)
          <input id="policy-reason" value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
        </label>
        <div class="actions">
          <button
            type="submit"
            id="save-policy"
            disabled={busy || !checked || !check?.validation.valid || check?.diff?.same || !reason.trim()}
          >
            Save as version {current.version + 1}
          </button>
        </div>
      </form>
    </section>
  );
}

/** What the check found: problems and warnings, the changes against the version in force, the dry run's counts. */
function CheckResults({ check, stale }: { check: Check; stale: boolean }) {
  const { validation, diff, dryRun } = check;
  return (
    <section aria-labelledby="check-title" class="card" id="policy-check">
      <h3 id="check-title">Check{stale ? ' (of an earlier draft: check again)' : ''}</h3>
      <p id="check-valid" class={validation.valid ? 'state ok' : 'state error'}>
        {validation.valid ? 'Valid.' : 'Not valid: a save would be refused.'}
      </p>
      {[...validation.problems, ...validation.warnings].length > 0 && (
        <ul id="check-problems">
          {validation.problems.map((p) => (
            <li key={`p:${p.path}:${p.message}`}>
              Problem at {p.path}: {p.message}
            </li>
          ))}
          {validation.warnings.map((p) => (
            <li key={`w:${p.path}:${p.message}`}>
              Warning at {p.path}: {p.message}
            </li>
          ))}
        </ul>
      )}
      {diff && (
        <>
          <h4>Against version {diff.from}</h4>
          {diff.same ? (
            <Empty>No change.</Empty>
          ) : (
            <ul id="check-diff">
              {diff.rules.map((r) => (
                <li key={`${r.id}:${r.change}`} data-change={r.change}>
                  {r.id}: {r.change}
                  {r.fields.length ? ` (${r.fields.join(', ')})` : ''}
                </li>
              ))}
              {diff.settings.map((s) => (
                <li key={s.field} data-change="setting">
                  {s.field}: {JSON.stringify(s.before)} → {JSON.stringify(s.after)}
                </li>
              ))}
            </ul>
          )}
        </>
      )}
      {dryRun && (
        <>
          <h4>
            Over the last 7 days ({formatNumber(dryRun.calls)} calls): {formatNumber(dryRun.allowed)} allowed,{' '}
            {formatNumber(dryRun.denied)} denied, {formatNumber(dryRun.would_deny)} would be denied (audit)
          </h4>
          <TableScroll>
            <table id="check-dry-run">
              <thead>
                <tr>
                  <th scope="col">Rule</th>
                  <th scope="col">Effect</th>
                  <th scope="col">Mode</th>
                  <th scope="col">Calls matched</th>
                </tr>
              </thead>
              <tbody>
                {dryRun.rules.map((r) => (
                  <tr key={r.id}>
                    <td>{r.id}</td>
                    <td>{r.effect}</td>
                    <td>{r.mode}</td>
                    <td class="num">{formatNumber(r.matched)}</td>
                  </tr>
                ))}
                <tr>
                  <td>(no rule)</td>
                  <td>{dryRun.default.effect}</td>
                  <td>—</td>
                  <td class="num">{formatNumber(dryRun.default.matched)}</td>
                </tr>
              </tbody>
            </table>
          </TableScroll>
        </>
      )}
    </section>
  );
}

/** Which version each device last fetched, newest fetch first; each device links to its page. */
function PolicyDevices({ session, reloads }: { session: Session; reloads: number }) {
  const devices = useLoad(`policy-devices:${reloads}`, () =>
    api(session).GET('/v1/admin/policy/devices', { params: { query: { limit: 20 } } }),
  );
  return (
    <section aria-labelledby="policy-devices-title">
      <h2 id="policy-devices-title">Devices</h2>
      <Show loaded={devices} what="the devices' policy versions">
        {({ data }) =>
          data.devices.length === 0 ? (
            <Empty>No device yet.</Empty>
          ) : (
            <TableScroll>
              <table id="policy-devices">
                <caption>
                  {formatNumber(data.total)} devices; version {data.current_version} is in force
                </caption>
                <thead>
                  <tr>
                    <th scope="col">Device</th>
                    <th scope="col">Owner</th>
                    <th scope="col">Version fetched</th>
                    <th scope="col">When</th>
                  </tr>
                </thead>
                <tbody>
                  {data.devices.map((d) => (
                    <tr key={d.device_id}>
                      <td>
                        <PageLink to={pageUrl(`/devices/${d.device_id}`)}>{d.serial_number}</PageLink>
                      </td>
                      <td>{d.owner_email}</td>
                      <td>
                        {d.version === null
                          ? 'never fetched'
                          : `${d.version}${d.current ? ' (current)' : ''}`}
                      </td>
                      <td>
                        <RelativeTime iso={d.fetched_at} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
          )
        }
      </Show>
    </section>
  );
}
