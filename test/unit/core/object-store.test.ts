// The directory store lists what it holds as keys, like S3's ListObjectsV2: under a prefix, sorted, files only, and
// never a file still being written.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DirectoryObjectStore } from '#shared/core/object-store/dir-store.ts';
import type { ObjectStore } from '#shared/core/object-store/store.ts';

const root = mkdtempSync(join(tmpdir(), 'acp-object-store-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('list: the keys under a prefix, in order, without directories or partial writes', async () => {
  const store: ObjectStore = new DirectoryObjectStore(root);
  assert.deepEqual(await new DirectoryObjectStore(join(root, 'absent')).list(''), []);
  for (const key of ['audit/anchors/002.json', 'audit/anchors/001.json', 'audit/keys/k.pem', 'other/x']) {
    await store.put(key, Buffer.from(key), 'text/plain');
  }
  writeFileSync(join(root, 'audit/anchors/003.json.1.partial'), 'half');
  assert.deepEqual(await store.list('audit/anchors/'), ['audit/anchors/001.json', 'audit/anchors/002.json']);
  assert.deepEqual(await store.list('audit/'), [
    'audit/anchors/001.json',
    'audit/anchors/002.json',
    'audit/keys/k.pem',
  ]);
  assert.equal(Buffer.from((await store.get('audit/keys/k.pem'))!).toString(), 'audit/keys/k.pem');
  await assert.rejects(store.put('../escape', Buffer.from('x'), 'text/plain'), /outside the directory/);
});
