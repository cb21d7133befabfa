// The hook command's own entry file: `<node> agent/hooks/entry.ts hook --client … --event … --state …`.
import { runHookProcess } from './main.ts';

runHookProcess(process.argv.slice(2));
