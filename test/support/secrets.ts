// Secrets for tests, made per run: no secret that signs or authenticates anything is written in the repository
// (shared/core/config/committed-secrets.ts refuses those that once were).
import { randomBytes } from 'node:crypto';

/** 256 random bits, base64url: a JWT secret or a service token of its own for one test run. */
export const randomSecret = (): string => randomBytes(32).toString('base64url');
