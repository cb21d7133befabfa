// The repository's documentation must work in a clone: every relative link in README.md, CONTRIBUTING.md,
// migrations/README.md and docs/**/*.md resolves to a file of the repository (and an `#anchor` into a markdown file
// to one of its headings, by GitHub's slug rules), no link leaves the repository, and nothing mentions ../shared/,
// the developer inputs that a clone does not have.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Markdown files under `dir` (relative to the root), at any depth. */
const markdownUnder = (dir: string): string[] =>
  readdirSync(join(ROOT, dir))
    .sort()
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      if (statSync(join(ROOT, path)).isDirectory()) return markdownUnder(path);
      return name.endsWith('.md') ? [path] : [];
    });

const docFiles = (): string[] => [
  'README.md',
  'CONTRIBUTING.md',
  'migrations/README.md',
  ...markdownUnder('docs'),
];

interface Line {
  number: number;
  text: string;
}

/** The lines of a markdown file outside fenced code blocks (``` or ~~~), with their 1-based numbers. */
function proseLines(markdown: string): Line[] {
  const out: Line[] = [];
  let fence: string | undefined;
  markdown.split('\n').forEach((text, i) => {
    const marker = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && /^\s*[`~]+\s*$/.test(text)) {
        fence = undefined;
      }
      return;
    }
    if (marker) {
      fence = marker;
      return;
    }
    out.push({ number: i + 1, text });
  });
  return out;
}

/** A line without its inline code spans, whose contents are never links. */
const withoutCode = (text: string): string => text.replace(/(`+)[\s\S]*?\1/g, '');

/** Link targets of a line: inline links and images `[text](target "title")`, and reference definitions. */
function linkTargets(text: string): string[] {
  const prose = withoutCode(text);
  const targets: string[] = [];
  for (const m of prose.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    targets.push(m[1] as string);
  }
  const definition = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/.exec(prose);
  if (definition) targets.push(definition[1] as string);
  return targets;
}

/** GitHub's heading anchor: lowercase, punctuation dropped, spaces to hyphens (github-slugger's rules). */
function slug(heading: string): string {
  const textOnly = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // links and images: their text
    .replace(/<[^>]+>/g, '') // inline HTML
    .replace(/[`*]/g, '');
  return textOnly
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor the headings of a markdown file define, with GitHub's -1, -2, … suffixes for repeated ones. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const base = slug(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;
const ALLOWED_SCHEMES = /^(https?|mailto):/i;

/** What is wrong with one link target of `file` (a path relative to the repository root); undefined when fine. */
function problemWith(file: string, target: string): string | undefined {
  if (SCHEME.test(target)) {
    return ALLOWED_SCHEMES.test(target) ? undefined : `uses a scheme other than http(s) or mailto`;
  }
  if (target.startsWith('//')) return 'is protocol-relative: write the full https:// URL';
  if (isAbsolute(target) || target.startsWith('/')) return 'is an absolute path: link relatively';
  const hash = target.indexOf('#');
  const pathPart = decodeURIComponent(hash >= 0 ? target.slice(0, hash) : target);
  const anchor = hash >= 0 ? decodeURIComponent(target.slice(hash + 1)) : undefined;
  const resolved = pathPart === '' ? join(ROOT, file) : resolve(ROOT, dirname(file), pathPart);
  const inRepo = relative(ROOT, resolved);
  if (inRepo.startsWith('..') || isAbsolute(inRepo)) return 'points outside the repository';
  if (!existsSync(resolved)) return `points to ${inRepo}, which does not exist`;
  if (anchor !== undefined) {
    if (!resolved.endsWith('.md') || statSync(resolved).isDirectory()) return undefined;
    if (!anchorsOf(readFileSync(resolved, 'utf8')).has(anchor)) {
      return `points to #${anchor}, which is not a heading of ${inRepo}`;
    }
  }
  return undefined;
}

describe('documentation links', () => {
  test('the slug rules match GitHub on the headings this repository uses', () => {
    assert.equal(slug('Deployment (AWS, CDK)'), 'deployment-aws-cdk');
    assert.equal(slug('Ingest (`bench:ingest`)'), 'ingest-benchingest');
    assert.equal(slug('Enrollment: register'), 'enrollment-register');
    assert.equal(
      slug('(a) Ed25519: key, certificate, fingerprint, inventory'),
      'a-ed25519-key-certificate-fingerprint-inventory',
    );
    assert.deepEqual([...anchorsOf('# A\n## A\n```\n# not a heading\n```\n## A\n')], ['a', 'a-1', 'a-2']);
  });

  test('the link finder sees inline links and definitions, not code', () => {
    assert.deepEqual(linkTargets('see [api](api.md#errors) and ![x](img.png "t")'), [
      'api.md#errors',
      'img.png',
    ]);
    assert.deepEqual(linkTargets('`[not](a-link.md)` but [yes](b.md)'), ['b.md']);
    assert.deepEqual(linkTargets('[ref]: ../README.md#layout'), ['../README.md#layout']);
    assert.equal(problemWith('docs/x.md', '../../outside.md'), 'points outside the repository');
  });

  for (const file of docFiles()) {
    test(`${file}: every relative link resolves inside the repository`, () => {
      const problems: string[] = [];
      for (const { number, text } of proseLines(readFileSync(join(ROOT, file), 'utf8'))) {
        for (const target of linkTargets(text)) {
          const problem = problemWith(file, target);
          if (problem) problems.push(`${file}:${number}: ${target} ${problem}`);
        }
      }
      assert.deepEqual(problems, []);
    });

    test(`${file}: mentions no ../shared/ (developer inputs a clone does not have)`, () => {
      const mentions = readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((text, i) => (text.includes('../shared/') ? [`${file}:${i + 1}: ${text.trim()}`] : []));
      assert.deepEqual(mentions, []);
    });
  }
});
