// Screenshots compared with committed baselines (test/e2e/screenshots/), pixel by pixel with pixelmatch. A pixel
// counts as different past pixelmatch's colour threshold, and pixels it detects as anti-aliasing do not count, so
// only a change a person could see fails. On a mismatch the test fails naming a temporary folder with the baseline,
// what the page looks like now and the difference in red. UPDATE_SCREENSHOTS=1 writes the baselines instead of
// comparing (CONTRIBUTING.md, "Screenshots"). Baselines are stored in 256 colours (upng-js), much smaller files,
// and the colours merged lie well within the threshold.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pixelmatch from 'pixelmatch';
import type { Page } from 'playwright-core';
import UPNG from 'upng-js';

const BASELINES = fileURLToPath(new URL('../e2e/screenshots/', import.meta.url));
const UPDATE = process.env.UPDATE_SCREENSHOTS === '1';
/** pixelmatch's per-pixel colour distance (0 to 1) below which two pixels are the same. */
const THRESHOLD = 0.1;
/** How many pixels may differ past it: a few stray edge pixels, far fewer than a changed word or colour. */
const MAX_DIFFERENT_PIXELS = 20;

interface Rgba {
  width: number;
  height: number;
  data: Uint8Array;
}

function decode(png: Uint8Array): Rgba {
  const image = UPNG.decode(png.buffer.slice(png.byteOffset, png.byteOffset + png.byteLength) as ArrayBuffer);
  return {
    width: image.width,
    height: image.height,
    data: new Uint8Array(UPNG.toRGBA8(image)[0] as ArrayBuffer),
  };
}

/** A PNG of `image`, in at most `colours` colours (0: every colour, lossless). */
const encode = (image: Rgba, colours = 0) =>
  new Uint8Array(UPNG.encode([image.data.slice().buffer], image.width, image.height, colours));

/**
 * The page's viewport, photographed without animations, against the baseline `name`.png. `mask` selects what differs
 * from run to run by design (a hash over random ids): each such element becomes a box of one size (it may not move
 * what follows it), painted flat, in the baseline too. The page's CSP refuses injected stylesheets (and so
 * Playwright's caret hiding and `style`): nothing focused has a caret when the console is photographed.
 */
export async function assertScreenshotMatches(
  page: Page,
  name: string,
  options: { mask?: string } = {},
): Promise<void> {
  const mask = options.mask ? [page.locator(options.mask)] : [];
  for (const element of mask) {
    await element.evaluateAll((els) => {
      for (const e of els as unknown as { style: Record<string, string> }[])
        Object.assign(e.style, {
          display: 'inline-block',
          width: '10em',
          overflow: 'hidden',
          verticalAlign: 'top',
        });
    });
  }
  const shot = decode(
    await page.screenshot({
      animations: 'disabled',
      caret: 'initial',
      scale: 'css',
      mask,
      maskColor: '#ff00ff',
    }),
  );
  const file = join(BASELINES, `${name}.png`);
  if (UPDATE) {
    mkdirSync(BASELINES, { recursive: true });
    writeFileSync(file, encode(shot, 256));
    return;
  }
  const where = relative(process.cwd(), file);
  assert.ok(existsSync(file), `no baseline ${where}: UPDATE_SCREENSHOTS=1 writes it (CONTRIBUTING.md)`);
  const baseline = decode(readFileSync(file));
  const { width, height } = shot;
  const diff = { width, height, data: new Uint8Array(width * height * 4) };
  const different =
    baseline.width === width && baseline.height === height
      ? pixelmatch(baseline.data, shot.data, diff.data, width, height, { threshold: THRESHOLD })
      : Number.POSITIVE_INFINITY;
  if (different <= MAX_DIFFERENT_PIXELS) return;
  const out = mkdtempSync(join(tmpdir(), `screenshot-${name}-`));
  writeFileSync(join(out, 'baseline.png'), encode(baseline));
  writeFileSync(join(out, 'actual.png'), encode(shot));
  if (Number.isFinite(different)) writeFileSync(join(out, 'diff.png'), encode(diff));
  assert.fail(
    `${name}: ${
      Number.isFinite(different)
        ? `${different} pixels differ from ${where}`
        : `${width}x${height}, the baseline ${where} is ${baseline.width}x${baseline.height}`
    } (at most ${MAX_DIFFERENT_PIXELS}); baseline, actual and diff in ${out}. If the change is meant, ` +
      'UPDATE_SCREENSHOTS=1 rewrites the baselines.',
  );
}
