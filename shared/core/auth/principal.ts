export const ROLES = ['admin', 'user'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Who is calling. `tokenUse` separates a person's session token from the narrow token the CLI sign-in issues to an
 * endpoint agent, which register accepts and nothing that needs an admin does, and from a service token, which only
 * the route that names it accepts (RouteSpec.serviceToken).
 */
export interface Principal {
  subject: string;
  email: string;
  name: string;
  roles: Role[];
  tokenUse: 'session' | 'cli' | 'service';
}

export const isAdmin = (p: Principal): boolean => p.tokenUse === 'session' && p.roles.includes('admin');
