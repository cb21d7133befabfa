// The policy's evaluation as the hook runs it (shared/policy/rules.ts): globs, first match in order, the
// default, audit mode, and that the dry run's ILIKE pattern of a glob means what the glob means (checked against
// PostgreSQL's own ILIKE on PGlite, not against our own reading of it).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import {
  evaluatePolicy,
  globLike,
  globRegExp,
  type PolicyDocument,
  ruleMatches,
} from '#shared/policy/rules.ts';
import { provisionDatabase } from '#test/support/databases.ts';

const policy: PolicyDocument = {
  rules: [
    {
      id: 'audit-writes',
      effect: 'deny',
      mode: 'audit',
      match: { tool: 'write_*' },
      reason: 'Writes soon refused.',
    },
    {
      id: 'no-paste',
      effect: 'deny',
      mode: 'enforce',
      match: { server: 'pastebin-*' },
      reason: 'No paste sites.',
    },
    {
      id: 'pg-data',
      effect: 'allow',
      mode: 'enforce',
      match: { server: 'postgres', group: 'data' },
      reason: 'Data team.',
    },
    {
      id: 'pg-others',
      effect: 'deny',
      mode: 'enforce',
      match: { server: 'postgres' },
      reason: 'Data team only.',
    },
    {
      id: 'tagged',
      effect: 'deny',
      mode: 'enforce',
      match: { device_tag: 'kiosk-*', agent_type: 'cursor' },
      reason: 'Not on kiosks.',
    },
    {
      id: 'official-only',
      effect: 'allow',
      mode: 'enforce',
      match: { source: 'npm:@modelcontextprotocol/*' },
      reason: 'Official servers.',
    },
  ],
  default: { effect: 'deny', reason: 'Unknown servers are refused.' },
  no_cache: 'closed',
};

test('globs: * any run, ? one character, case-insensitive, anchored, other characters literal', () => {
  assert.ok(globRegExp('pastebin-*').test('Pastebin-Uploader'));
  assert.ok(globRegExp('pastebin-*').test('pastebin-'));
  assert.ok(!globRegExp('pastebin-*').test('my-pastebin-x'));
  assert.ok(globRegExp('v?').test('v1'));
  assert.ok(!globRegExp('v?').test('v10'));
  assert.ok(globRegExp('a.b').test('a.b'));
  assert.ok(!globRegExp('a.b').test('axb'), 'a dot is a dot');
  assert.ok(globRegExp('(x)+[y]').test('(x)+[y]'));
  assert.ok(globRegExp('*').test(''));
  assert.ok(globRegExp('multi*line').test('multi\nline'));
});

test('a rule matches when every field it names matches; a rule naming none matches all', () => {
  assert.ok(ruleMatches({}, { server: 'x' }));
  assert.ok(ruleMatches({ server: 'postgres', group: 'data' }, { server: 'postgres', group: 'DATA' }));
  assert.ok(
    !ruleMatches({ server: 'postgres', group: 'data' }, { server: 'postgres' }),
    'no group: no match',
  );
  assert.ok(ruleMatches({ device_tag: 'kiosk-*' }, { device_tags: ['laptop', 'kiosk-lobby'] }));
  assert.ok(!ruleMatches({ device_tag: 'kiosk-*' }, { device_tags: [] }));
  assert.ok(!ruleMatches({ actor: '*@example.com' }, {}));
});

test('first enforce rule in order decides; the default when none matches', () => {
  const at = (call: Parameters<typeof evaluatePolicy>[2]) => evaluatePolicy(policy, 7, call);
  assert.deepEqual(at({ server: 'pastebin-up', tool: 'upload' }), {
    effect: 'deny',
    rule: 'no-paste@7',
    reason: 'No paste sites.',
  });
  assert.equal(at({ server: 'postgres', group: 'data' }).rule, 'pg-data@7');
  assert.equal(at({ server: 'postgres', group: 'data' }).effect, 'allow');
  assert.equal(at({ server: 'postgres', group: 'sales' }).rule, 'pg-others@7');
  assert.equal(at({ server: 'postgres', group: 'sales' }).effect, 'deny');
  assert.equal(at({ server: 'fs', agent_type: 'cursor', device_tags: ['kiosk-1'] }).rule, 'tagged@7');
  assert.equal(at({ server: 'fs', source: 'npm:@modelcontextprotocol/server-filesystem' }).effect, 'allow');
  const unknown = at({ server: 'fs', source: 'npm:evil-fs' });
  assert.deepEqual(unknown, { effect: 'deny', rule: 'default@7', reason: 'Unknown servers are refused.' });
});

test('audit mode: a match is reported with the outcome and never decides', () => {
  const allowed = evaluatePolicy(policy, 3, {
    server: 'fs',
    tool: 'write_file',
    source: 'npm:@modelcontextprotocol/server-filesystem',
  });
  assert.equal(allowed.effect, 'allow');
  assert.equal(allowed.rule, 'official-only@3');
  assert.deepEqual(allowed.audit, { effect: 'deny', rule: 'audit-writes@3', reason: 'Writes soon refused.' });
  const denied = evaluatePolicy(policy, 3, { server: 'pastebin-x', tool: 'write_paste' });
  assert.equal(denied.rule, 'no-paste@3');
  assert.equal(denied.audit?.rule, 'audit-writes@3');
  const onlyAudit: PolicyDocument = {
    ...policy,
    rules: [policy.rules[0] as PolicyDocument['rules'][number]],
  };
  const byDefault = evaluatePolicy(onlyAudit, 1, { server: 'x', tool: 'write_x' });
  assert.equal(byDefault.rule, 'default@1');
  assert.equal(byDefault.audit?.rule, 'audit-writes@1');
});

test('globLike: PostgreSQL ILIKE with the translated pattern agrees with the glob', async () => {
  // The suite's PGlite template, copied: opening it is cheaper than creating a database.
  const database = await provisionDatabase('pglite');
  const db = new PGlite(database.dataDir);
  try {
    const cases: Array<[string, string]> = [
      ['pastebin-*', 'Pastebin-Uploader'],
      ['pastebin-*', 'my-pastebin'],
      ['v?', 'v1'],
      ['v?', 'v10'],
      ['100%_done', '100%_done'],
      ['100%_done', '100xydone'],
      ['a\\b', 'a\\b'],
      ['a\\b', 'ab'],
      ['*@example.com', 'ana@EXAMPLE.com'],
      ['npm:@modelcontextprotocol/*', 'npm:@modelcontextprotocol/server-postgres'],
    ];
    for (const [glob, value] of cases) {
      const { rows } = await db.query<{ m: boolean }>("SELECT $1::text ILIKE $2::text ESCAPE '\\' AS m", [
        value,
        globLike(glob),
      ]);
      assert.equal(rows[0]?.m, globRegExp(glob).test(value), `${glob} on ${value}`);
    }
  } finally {
    await db.close();
    await database.cleanup();
  }
});
