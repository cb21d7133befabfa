// The simulated fleet shows what the admin views are for: besides ordinary traffic, MCPs called but configured on no
// laptop (shadow) and MCPs configured but never called, in every seed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rng, simulatedEvents, simulatedInventory } from '#agent/simulate.ts';

test('a simulated fleet has shadow MCPs, idle MCPs, and all three results', () => {
  for (const seed of [1, 42, 2026]) {
    const r = rng(seed);
    const configured = new Set<string>();
    const called = new Set<string>();
    const results = new Set<string>();
    const to = new Date('2026-11-23T00:00:00Z');
    const from = new Date(to.getTime() - 86_400_000);
    for (let device = 0; device < 10; device++) {
      const inventory = simulatedInventory(r);
      for (const agent of inventory) for (const mcp of agent.mcps) configured.add(mcp.name);
      for (const event of simulatedEvents(r, inventory, 200, { actorEmail: 'a@example.test', from, to })) {
        called.add(event.mcp_name);
        results.add(event.result);
        assert.ok(event.event_time >= from.toISOString() && event.event_time < to.toISOString());
      }
    }
    const shadow = [...called].filter((name) => !configured.has(name));
    const idle = [...configured].filter((name) => !called.has(name));
    assert.ok(shadow.length > 0, `seed ${seed}: no shadow MCP`);
    assert.ok(idle.length > 0, `seed ${seed}: no configured-but-never-called MCP`);
    assert.deepEqual([...results].sort(), ['allowed', 'denied', 'error']);
  }
});
