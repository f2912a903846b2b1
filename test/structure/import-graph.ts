/**
 * The import graph of `src/`, as dependency-cruiser reads it (type-only imports included: the structure is what is
 * checked, not only what runs), with the checks the structure test makes on it: file-level cycles (dependency-cruiser's
 * `circular` rule), imports from a lower layer into a higher one (one `forbidden` rule per layer, from the table in
 * `layers.ts`), cycles between folders, and files over the line limit.
 */
import { readFileSync } from 'node:fs';
import { cruise, type ICruiseResult, type IForbiddenRuleType } from 'dependency-cruiser';
import { LAYERS, layerOf, unitOf } from './layers.ts';

export interface ImportGraph {
  /** Every file of src/, as `src/…` paths. */
  files: string[];
  /** file → the src/ files it imports. */
  imports: Map<string, Set<string>>;
  /** What dependency-cruiser's rules found: `no-cycle` and `layer-<name>` violations. */
  violations: { rule: string; from: string; to: string }[];
}

/** A layer may import itself and every layer below it; everything above is forbidden. */
function layerRules(): IForbiddenRuleType[] {
  return LAYERS.flatMap((layer, index) => {
    const higher = LAYERS.slice(index + 1).flatMap((above) => above.paths);
    if (higher.length === 0) return [];
    return [
      {
        name: `layer-${layer.name}`,
        comment: `${layer.name} must not import a higher layer`,
        severity: 'error' as const,
        from: { path: layer.paths },
        to: { path: higher },
      },
    ];
  });
}

export async function readImportGraph(): Promise<ImportGraph> {
  const reported = await cruise(['src'], {
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/' },
    validate: true,
    ruleSet: {
      forbidden: [
        { name: 'no-cycle', severity: 'error', from: { path: '^src/' }, to: { circular: true } },
        ...layerRules(),
      ],
    },
  });
  const result = reported.output as ICruiseResult;
  const imports = new Map<string, Set<string>>();
  for (const module of result.modules) {
    if (!module.source.startsWith('src/')) continue;
    const targets = new Set<string>();
    for (const dependency of module.dependencies) {
      if (dependency.resolved.startsWith('src/') && !dependency.couldNotResolve) targets.add(dependency.resolved);
    }
    imports.set(module.source, targets);
  }
  return {
    files: [...imports.keys()].sort(),
    imports,
    violations: result.summary.violations.map((violation) => ({
      rule: violation.rule.name,
      from: violation.from,
      to: violation.to,
    })),
  };
}

/** Strongly connected components with more than one member (Tarjan), each sorted; nodes are whatever `edges` names. */
export function cycles(edges: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of edges.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const node of [...edges.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** The folder graph: `src/channels/x.ts` → `src/store/y.ts` is `channels → store` (see `unitOf`). */
export function folderImports(graph: ImportGraph): Map<string, Set<string>> {
  const folders = new Map<string, Set<string>>();
  for (const [from, targets] of graph.imports) {
    const source = unitOf(from);
    const set = folders.get(source) ?? new Set<string>();
    for (const target of targets) if (unitOf(target) !== source) set.add(unitOf(target));
    folders.set(source, set);
  }
  return folders;
}

/** Layer violations by folder pair (`api → store`), with one example import each. */
export function layerViolations(graph: ImportGraph): Map<string, string> {
  const pairs = new Map<string, string>();
  for (const violation of graph.violations) {
    if (!violation.rule.startsWith('layer-')) continue;
    const key = `${unitOf(violation.from)} → ${unitOf(violation.to)}`;
    if (!pairs.has(key)) pairs.set(key, `${violation.from} imports ${violation.to}`);
  }
  return pairs;
}

export function lineCount(file: string): number {
  const text = readFileSync(file, 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

export { layerOf };
