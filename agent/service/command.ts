// `agent service install | uninstall | status`, as the CLI calls it: the service runs this very agent (the Node
// binary and script that are running now) with `run --state <dir>`.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { daemonCommand, type ServicePlatform } from './definition.ts';
import { installService, type ServiceOptions, serviceStatus, uninstallService } from './install.ts';

const PLATFORMS: readonly ServicePlatform[] = ['darwin', 'linux', 'win32'];

export function serviceCommand(
  action: string | undefined,
  options: { stateDir: string; root?: string | undefined; platform?: string | undefined },
): void {
  const platform = (options.platform ?? process.platform) as ServicePlatform;
  if (!PLATFORMS.includes(platform))
    throw new Error(`--platform must be one of ${PLATFORMS.join(', ')}, not ${JSON.stringify(platform)}`);
  if (platform !== process.platform && !options.root)
    throw new Error(
      `--platform ${platform} needs --root DIR: on this machine only the file can be written for it`,
    );
  const stateDir = resolve(options.stateDir);
  const script = realpathSync(process.argv[1] ?? '');
  const env = process.env;
  const spec: ServiceOptions = {
    platform,
    home: homedir(),
    stateDir,
    command: daemonCommand(process.execPath, script, stateDir),
    ...(env.USERDOMAIN && env.USERNAME ? { user: `${env.USERDOMAIN}\\${env.USERNAME}` } : {}),
    ...(options.root ? { root: resolve(options.root) } : {}),
    env,
  };
  switch (action) {
    case 'install':
      installService(spec);
      return;
    case 'uninstall':
      uninstallService(spec);
      return;
    case 'status':
      serviceStatus(spec);
      return;
    default:
      throw new Error(`service needs install, uninstall or status, not ${JSON.stringify(action ?? '')}`);
  }
}
