// Whether CLI sign-in is on: a module of its own, importing nothing that runs, because both the CLI sign-in rows and
// device registration (no enrollment without it) ask, and neither bundle should load the other's schemas.
import type { Config } from '../core/config/schema.ts';

/** CLI sign-in needs the dashboard's login page: without a dashboard URL its routes are not mounted at all. */
export const cliSigninEnabled = (config: Config) => Boolean(config.dashboard_url);
