/**
 * The TypeScript side of the wire contract, checked against contracts/wire.json: the JSON Schema generated
 * from the server's pydantic models (`make wire-schema`; tests/test_wire_schema.py checks the Python side).
 *
 * The TypeScript compiler reads src/tokens.ts (which re-exports events.ts and wire.ts), src/notebookOps.ts and
 * src/bridgeWire.ts and resolves the unions `AgentEvent`, `ClientCommand`, `NotebookEdit`, `BridgeRequest`
 * and `TabMessage` (and the bridge's result interfaces). For every variant in the schema
 * there must be exactly one union member with the same discriminator, the same field names (the event
 * envelope seq/session_id/ts aside), no optional field where the schema requires one, and the same string
 * literals wherever the schema has an enum or a const; nested objects with named fields are compared the
 * same way.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as ts from 'typescript';

type Json = { [key: string]: any };

const ROOT = path.resolve(__dirname, '..', '..');
const SCHEMA: Json = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'contracts', 'wire.json'), 'utf8')
);
// Added to every event by the conversation log, not part of the event models.
const ENVELOPE = new Set(['seq', 'session_id', 'ts']);

function loadProgram(): { checker: ts.TypeChecker; files: ts.SourceFile[] } {
  const config = ts.readConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    ts.sys.readFile
  );
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  const names = [
    'tokens.ts',
    'notebookOps.ts',
    'bridgeWire.ts',
    'events.ts',
    'wire.ts'
  ].map(name => path.join(ROOT, 'src', name));
  // noResolve: only these files, not the JupyterLab packages they import (seconds instead of a minute);
  // the fields compared here are all declared in them.
  const program = ts.createProgram(names, {
    ...parsed.options,
    noEmit: true,
    composite: false,
    incremental: false,
    declaration: false,
    noResolve: true
  });
  return {
    checker: program.getTypeChecker(),
    files: names.slice(0, 3).map(name => program.getSourceFile(name)!)
  };
}

const { checker, files } = loadProgram();

/** An exported type of a module, followed through `export * from`. */
function exportedType(file: ts.SourceFile, name: string): ts.Type {
  const module = checker.getSymbolAtLocation(file)!;
  const symbol = checker.getExportsOfModule(module).find(s => s.name === name);
  if (!symbol) {
    throw new Error(`${file.fileName} exports no ${name}`);
  }
  const target =
    symbol.flags & ts.SymbolFlags.Alias
      ? checker.getAliasedSymbol(symbol)
      : symbol;
  return checker.getDeclaredTypeOfSymbol(target);
}

function withoutNullish(type: ts.Type): ts.Type[] {
  const parts = type.isUnion() ? type.types : [type];
  return parts.filter(
    part => !(part.flags & (ts.TypeFlags.Null | ts.TypeFlags.Undefined))
  );
}

function stringLiterals(type: ts.Type): string[] | null {
  const parts = withoutNullish(type);
  if (parts.length === 0 || !parts.every(part => part.isStringLiteral())) {
    return null;
  }
  return parts.map(part => (part as ts.StringLiteralType).value).sort();
}

function propertyType(owner: ts.Type, name: string): ts.Type {
  const symbol = checker.getPropertyOfType(owner, name)!;
  return checker.getTypeOfSymbol(symbol);
}

/** The schema of a value with references and `X | None` taken apart. */
function resolved(schema: Json, defs: Json): Json {
  if (schema.$ref) {
    return resolved(defs[schema.$ref.replace('#/$defs/', '')], defs);
  }
  if (schema.anyOf) {
    const notNull = schema.anyOf.filter((s: Json) => s.type !== 'null');
    if (notNull.length === 1) {
      return resolved(notNull[0], defs);
    }
  }
  return schema;
}

function schemaLiterals(schema: Json): string[] | null {
  if (typeof schema.const === 'string') {
    return [schema.const];
  }
  if (Array.isArray(schema.enum)) {
    return [...schema.enum].sort();
  }
  return null;
}

function compareObject(
  schema: Json,
  type: ts.Type,
  defs: Json,
  where: string,
  problems: string[]
): void {
  const expected = Object.keys(schema.properties ?? {}).sort();
  const actual = checker
    .getPropertiesOfType(type)
    .map(symbol => symbol.name)
    .filter(name => !ENVELOPE.has(name))
    .sort();
  for (const name of expected.filter(name => !actual.includes(name))) {
    problems.push(
      `${where}: field "${name}" is in the schema, not in TypeScript`
    );
  }
  for (const name of actual.filter(name => !expected.includes(name))) {
    problems.push(
      `${where}: field "${name}" is in TypeScript, not in the schema`
    );
  }
  for (const name of expected.filter(name => actual.includes(name))) {
    const symbol = checker.getPropertyOfType(type, name)!;
    const here = `${where}.${name}`;
    if (
      (schema.required ?? []).includes(name) &&
      symbol.flags & ts.SymbolFlags.Optional
    ) {
      problems.push(`${here}: required in the schema, optional in TypeScript`);
    }
    compareValue(
      schema.properties[name],
      propertyType(type, name),
      defs,
      here,
      problems
    );
  }
}

function compareValue(
  raw: Json,
  type: ts.Type,
  defs: Json,
  where: string,
  problems: string[]
): void {
  const schema = resolved(raw, defs);
  const literals = schemaLiterals(schema);
  if (literals) {
    const actual = stringLiterals(type);
    if (JSON.stringify(actual) !== JSON.stringify(literals)) {
      problems.push(
        `${where}: the schema allows ${JSON.stringify(literals)}, TypeScript ${JSON.stringify(actual)}`
      );
    }
    return;
  }
  const parts = withoutNullish(type);
  if (parts.length !== 1) {
    return;
  }
  if (schema.type === 'object' && schema.properties) {
    compareObject(schema, parts[0], defs, where, problems);
  } else if (schema.type === 'array' && schema.items) {
    const element = checker.isArrayType(parts[0])
      ? checker.getTypeArguments(parts[0] as ts.TypeReference)[0]
      : undefined;
    if (element) {
      compareValue(schema.items, element, defs, `${where}[]`, problems);
    }
  }
}

/** Every difference between one discriminated union of the schema and its TypeScript union. */
function compareUnion(group: Json, union: ts.Type, name: string): string[] {
  const problems: string[] = [];
  const key: string = group.discriminator.propertyName;
  const mapping: Record<string, string> = group.discriminator.mapping;
  const members = new Map<string, ts.Type>();
  for (const member of union.isUnion() ? union.types : [union]) {
    const tag = stringLiterals(propertyType(member, key));
    for (const value of tag ?? []) {
      members.set(value, member);
    }
  }
  for (const value of Object.keys(mapping).filter(v => !members.has(v))) {
    problems.push(`${name}: no member with ${key} "${value}"`);
  }
  for (const value of [...members.keys()].filter(v => !(v in mapping))) {
    problems.push(
      `${name}: member with ${key} "${value}" is not in the schema`
    );
  }
  for (const [value, ref] of Object.entries(mapping)) {
    const member = members.get(value);
    if (member) {
      const variant = group.$defs[ref.replace('#/$defs/', '')];
      compareObject(
        variant,
        member,
        group.$defs,
        `${name}["${value}"]`,
        problems
      );
    }
  }
  return problems;
}

function contractProblems(schema: Json): string[] {
  const [tokens, notebookOps, bridgeWire] = files;
  const results: string[] = [];
  for (const [name, result] of Object.entries(
    (schema.bridge_results ?? {}) as Record<string, Json>
  )) {
    compareObject(
      result,
      exportedType(bridgeWire, `I${name}`),
      result.$defs ?? {},
      `bridge result ${name}`,
      results
    );
  }
  return [
    ...compareUnion(
      schema.events,
      exportedType(tokens, 'AgentEvent'),
      'AgentEvent'
    ),
    ...compareUnion(
      schema.commands,
      exportedType(tokens, 'ClientCommand'),
      'ClientCommand'
    ),
    ...compareUnion(
      schema.notebook_edits,
      exportedType(notebookOps, 'NotebookEdit'),
      'NotebookEdit'
    ),
    ...compareUnion(
      schema.bridge_requests,
      exportedType(bridgeWire, 'BridgeRequest'),
      'BridgeRequest'
    ),
    ...compareUnion(
      schema.bridge_messages,
      exportedType(bridgeWire, 'TabMessage'),
      'TabMessage'
    ),
    ...results
  ];
}

describe('the wire contract (contracts/wire.json)', () => {
  it('is what the TypeScript event, command, notebook edit and bridge message types say', () => {
    expect(contractProblems(SCHEMA)).toEqual([]);
  });

  it('catches a field, a variant or a literal that changed on one side only', () => {
    const drifted: Json = JSON.parse(JSON.stringify(SCHEMA));
    const events = drifted.events.$defs;
    events.TurnStartEvent.properties.extra = { type: 'string' };
    events.TurnStartEvent.required.push('extra');
    delete events.ErrorEvent.properties.code;
    events.AssistantDeltaEvent.properties.kind.enum = ['text'];
    events.ApprovalRequest.properties.drifted_field = { type: 'string' };
    events.ToolCallSummary.properties.index = { type: 'integer' };
    drifted.events.discriminator.mapping['turn.paused'] =
      '#/$defs/TurnStartEvent';
    drifted.commands.$defs.DenyCommand.required.push('reason');
    drifted.bridge_results.AppliedDelta.properties.notebook = {
      type: 'object'
    };
    delete drifted.bridge_requests.$defs.SetTextRequest.properties.expected;

    const problems = contractProblems(drifted);
    const expected = [
      'AgentEvent["turn.start"]: field "extra" is in the schema, not in TypeScript',
      'AgentEvent["error"]: field "code" is in TypeScript, not in the schema',
      'AgentEvent["assistant.delta"].kind: the schema allows ["text"], TypeScript ["reasoning","text"]',
      'AgentEvent["approval.request"].request: field "drifted_field" is in the schema, not in TypeScript',
      'AgentEvent["assistant.message"].tool_calls[]: field "index" is in the schema, not in TypeScript',
      'AgentEvent: no member with type "turn.paused"',
      'ClientCommand["deny"].reason: required in the schema, optional in TypeScript',
      'bridge result AppliedDelta: field "notebook" is in the schema, not in TypeScript',
      'BridgeRequest["set_text"]: field "expected" is in TypeScript, not in the schema'
    ];
    for (const problem of expected) {
      expect(problems).toContain(problem);
    }
    expect(problems).toHaveLength(expected.length);
  });
});
