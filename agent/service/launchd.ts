// macOS: a per-user LaunchAgent (launchd.plist(5)), in ~/Library/LaunchAgents/<label>.plist, started at login and
// kept running. Written by hand (a handful of keys); the tests read it back with an independent plist parser.
import { posix } from 'node:path';
import { SERVICE_NAMES, type ServiceDefinition, type ServiceSpec, serviceLogPath } from './definition.ts';
import { xmlText } from './xml-text.ts';

const string = (text: string) => `<string>${xmlText(text)}</string>`;

export function launchAgent(spec: ServiceSpec): ServiceDefinition {
  const log = serviceLogPath(spec);
  const body = [
    '<key>Label</key>',
    string(SERVICE_NAMES.launchd),
    '<key>ProgramArguments</key>',
    '<array>',
    ...spec.command.map((arg) => `  ${string(arg)}`),
    '</array>',
    '<key>WorkingDirectory</key>',
    string(spec.stateDir),
    // Started at login, and again whenever it stops for any reason, but no sooner than ThrottleInterval seconds
    // after the last start: a daemon that cannot start does not spin.
    '<key>RunAtLoad</key>',
    '<true/>',
    '<key>KeepAlive</key>',
    '<true/>',
    '<key>ThrottleInterval</key>',
    '<integer>30</integer>',
    // Background: launchd applies the resource limits of work the user is not waiting for.
    '<key>ProcessType</key>',
    string('Background'),
    '<key>StandardOutPath</key>',
    string(log),
    '<key>StandardErrorPath</key>',
    string(log),
  ];
  const contents = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">',
    '<plist version="1.0">',
    '<dict>',
    ...body.map((line) => `  ${line}`),
    '</dict>',
    '</plist>',
    '',
  ].join('\n');
  return {
    path: posix.join(spec.home, 'Library', 'LaunchAgents', `${SERVICE_NAMES.launchd}.plist`),
    contents,
  };
}
