// Paths of the platform the settings belong to (a Windows machine's on Windows, in tests on any host).
import { posix, win32 } from 'node:path';
import type { HookEnv } from '../types.ts';

export const pathOf = (env: HookEnv): typeof posix => (env.platform === 'win32' ? win32 : posix);
