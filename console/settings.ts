// What the console is told at run time (its config.json beside the assets) and what its Content-Security-Policy lets
// it call, both from the service config, for both places that serve it: the local server (local-server/console.ts)
// and the stack (infra/constructs/console-site.ts).
import type { Config } from '#shared/core/config/schema.ts';
import { idpIssuer } from '../shared/core/auth/idp-tokens.ts';
import type { IdpSettings } from './src/oidc.ts';

/** config.json: where the API is (absent: the console's own origin) and the IdP it signs in through (absent: local accounts). */
export interface ConsoleSettings {
  api_url?: string;
  idp?: IdpSettings;
}

/** Whether the console signs in through the IdP: auth.provider = "idp" with a client ID for it (not the bypass). */
export function consoleUsesIdp(config: Config): boolean {
  return config.auth.provider === 'idp' && !config.auth.idp_bypass && config.auth.idp_client_id !== '';
}

export function consoleSettings(config: Config, apiUrl?: string): ConsoleSettings {
  return {
    ...(apiUrl === undefined ? {} : { api_url: apiUrl }),
    ...(consoleUsesIdp(config)
      ? {
          idp: {
            issuer: idpIssuer(config),
            client_id: config.auth.idp_client_id,
            scope: config.auth.idp_scopes.trim().split(/\s+/).join(' '),
            audience: config.auth.idp_audience,
          },
        }
      : {}),
  };
}

/**
 * The origins the console fetches from besides the API: the IdP's (its discovery document and token endpoint; its
 * sign-in pages are navigations, which connect-src does not govern).
 */
export function consoleConnectSources(config: Config): string[] {
  return consoleUsesIdp(config) ? [new URL(idpIssuer(config)).origin] : [];
}
