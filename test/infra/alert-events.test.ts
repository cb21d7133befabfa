// The alerts' part of the synthesized stack (infra/constructs/alert-events.ts): an event bus, a rule on it for the
// documented source and detail type whose target is the alert event log, the alerts function allowed to put events on
// that bus (and given its name), and with webhooks configured, the signing secret readable by that function alone.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { ALERT_DETAIL_TYPE, ALERT_EVENT_SOURCE } from '#shared/alerts/events.ts';
import { ALERTS_HANDLER } from '../../infra/stack.ts';
import { PROJECT_ROOT, type Synthesized, synth } from './synth.ts';

type Resource = { Type: string; Properties: Record<string, unknown> };
const scratch = mkdtempSync(join(tmpdir(), 'alert-events-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const resources = (s: Synthesized) => s.template.toJSON().Resources as Record<string, Resource>;
const ofType = (s: Synthesized, type: string) =>
  Object.entries(resources(s)).filter(([, r]) => r.Type === type);
const alertsFunctionId = (s: Synthesized) =>
  s.stack.getLogicalId(s.stack.functions.get(ALERTS_HANDLER)!.node.defaultChild as never);
const ref = (id: string) => JSON.stringify({ Ref: id });

test('an alert bus, a rule for the documented detail type targeting the alert log, PutEvents by the alerts function', () => {
  const s = synth();
  const buses = ofType(s, 'AWS::Events::EventBus');
  assert.equal(buses.length, 1);
  const [busId] = buses[0]!;
  const rules = ofType(s, 'AWS::Events::Rule').filter(
    ([, r]) => JSON.stringify(r.Properties.EventBusName) === ref(busId),
  );
  assert.equal(rules.length, 1);
  const rule = rules[0]![1].Properties;
  assert.deepEqual(rule.EventPattern, { source: [ALERT_EVENT_SOURCE], 'detail-type': [ALERT_DETAIL_TYPE] });
  const ruleTargets = rule.Targets as Array<{ Arn: unknown }>;
  assert.equal(ruleTargets.length, 1);
  const logGroups = ofType(s, 'AWS::Logs::LogGroup').map(([id]) => id);
  const target = JSON.stringify(ruleTargets[0]!.Arn);
  assert.ok(
    logGroups.some((id) => target.includes(`"${id}"`)),
    `the rule's target is a log group of the stack: ${target}`,
  );

  const fnId = alertsFunctionId(s);
  const fn = resources(s)[fnId]!;
  const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
  assert.equal(JSON.stringify(env.SVC_ALERTS_EVENT_BUS), ref(busId));
  const putters = ofType(s, 'AWS::IAM::Policy').filter(([, p]) => {
    const text = JSON.stringify(p.Properties.PolicyDocument);
    return text.includes('events:PutEvents') && text.includes(busId);
  });
  assert.equal(putters.length, 1, 'one role may put on the bus');
  const roles = JSON.stringify(putters[0]![1].Properties.Roles);
  assert.equal(
    roles,
    JSON.stringify([{ Ref: (fn.Properties.Role as { 'Fn::GetAtt': string[] })['Fn::GetAtt'][0] }]),
  );
  assert.equal(env.SVC_ALERTS_WEBHOOK_SECRET_ARN, undefined, 'no webhooks: no secret');
});

test('with webhooks: a generated signing secret, its ARN given to the alerts function only', () => {
  const text = readFileSync(join(PROJECT_ROOT, 'config/prod.toml'), 'utf8');
  assert.doesNotMatch(text, /^\[alerts\]/m, 'this test appends its own [alerts] table');
  const file = join(scratch, 'webhooks.toml');
  writeFileSync(file, `${text}\n[[alerts.webhooks]]\nname = "siem"\nurl = "https://siem.example.com/hook"\n`);
  const s = synth({ configFile: file });
  const secrets = ofType(s, 'AWS::SecretsManager::Secret').filter(([, r]) =>
    String(r.Properties.Description).includes('alert webhook'),
  );
  assert.equal(secrets.length, 1);
  const [secretId, secret] = secrets[0]!;
  assert.ok(secret.Properties.GenerateSecretString, 'generated, never given');
  const given = Object.entries(resources(s)).filter(
    ([, r]) =>
      r.Type === 'AWS::Lambda::Function' &&
      JSON.stringify(
        (r.Properties.Environment as { Variables?: unknown } | undefined)?.Variables ?? {},
      ).includes(`"${secretId}"`),
  );
  assert.deepEqual(
    given.map(([id]) => id),
    [alertsFunctionId(s)],
  );
});
