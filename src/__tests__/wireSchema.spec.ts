/**
 * The TypeScript side of the wire contract, checked against contracts/wire.json: the JSON Schema generated
 * from the server's pydantic models (`make wire-schema`; tests/test_wire_schema.py checks the Python side).
 *
 * The file's `typescript` table (hdsp_agent/wire_schema.py, TYPESCRIPT) names the TypeScript mirror of each
 * section: a union (`AgentEvent`, `ClientCommand`, `NotebookEdit`, …) or named models (`rest`: each REST body
 * and reply → its `I…` interface). For every variant of a union there must be exactly one member with the
 * same discriminator; every object has the same field names (the event envelope seq/session_id/ts aside), no
 * optional field where the schema requires one, `null` allowed where a required field may be null, the same
 * kind of value in each field (string, number, boolean, array, object, the same for array elements and map
 * values) and the same string literals wherever the schema has an enum or a const; nested objects with named
 * fields are compared the same way. A section added to the table is checked with no change here.
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

function loadProgram(): { checker: ts.TypeChecker; program: ts.Program } {
  const config = ts.readConfigFile(
    path.join(ROOT, 'tsconfig.json'),
    ts.sys.readFile
  );
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  // Every module of src/ (not the React components): any of them may hold a mirror the table names.
  const names = fs
    .readdirSync(path.join(ROOT, 'src'))
    .filter(name => name.endsWith('.ts') && !name.endsWith('.d.ts'))
    .map(name => path.join(ROOT, 'src', name));
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
  return { checker: program.getTypeChecker(), program };
}

const { checker, program } = loadProgram();

function sourceFile(relative: string): ts.SourceFile {
  const file = program.getSourceFile(path.join(ROOT, relative));
  if (!file) {
    throw new Error(`${relative} is not a module of src/`);
  }
  return file;
}

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
  problems: string[],
  ignore: Set<string> = new Set()
): void {
  const expected = Object.keys(schema.properties ?? {}).sort();
  const actual = checker
    .getPropertiesOfType(type)
    .map(symbol => symbol.name)
    .filter(name => !ignore.has(name))
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
    const required = (schema.required ?? []).includes(name);
    if (required && symbol.flags & ts.SymbolFlags.Optional) {
      problems.push(`${here}: required in the schema, optional in TypeScript`);
    }
    const valueType = propertyType(type, name);
    if (
      required &&
      allowsNull(schema.properties[name], defs) &&
      !(symbol.flags & ts.SymbolFlags.Optional) &&
      !withNullish(valueType).some(part => part.flags & ts.TypeFlags.Null)
    ) {
      problems.push(`${here}: may be null in the schema, not in TypeScript`);
    }
    compareValue(schema.properties[name], valueType, defs, here, problems);
  }
}

function withNullish(type: ts.Type): ts.Type[] {
  return type.isUnion() ? type.types : [type];
}

function allowsNull(raw: Json, defs: Json): boolean {
  const schema = raw.$ref ? resolved(raw, defs) : raw;
  return (
    schema.type === 'null' ||
    (Array.isArray(schema.anyOf) &&
      schema.anyOf.some((s: Json) => allowsNull(s, defs)))
  );
}

/** The kinds of value a schema allows (null aside); null when it allows anything. */
function schemaKinds(raw: Json, defs: Json): Set<string> | null {
  const schema = raw.$ref ? resolved(raw, defs) : raw;
  if (Array.isArray(schema.anyOf)) {
    const kinds = new Set<string>();
    for (const option of schema.anyOf) {
      const inner = schemaKinds(option, defs);
      if (inner === null) {
        return null;
      }
      inner.forEach(kind => kinds.add(kind));
    }
    return kinds;
  }
  const named: Record<string, string> = {
    string: 'string',
    integer: 'number',
    number: 'number',
    boolean: 'boolean',
    array: 'array',
    object: 'object'
  };
  if (schema.type === 'null') {
    return new Set();
  }
  if (typeof schema.const === 'string' || Array.isArray(schema.enum)) {
    return new Set([named[schema.type] ?? 'string']);
  }
  const kind = named[schema.type];
  return kind ? new Set([kind]) : null;
}

/** The kinds of value a TypeScript type allows (null and undefined aside); null for any/unknown. */
function typeKinds(type: ts.Type): Set<string> | null {
  const kinds = new Set<string>();
  for (const part of withoutNullish(type)) {
    if (part.flags & (ts.TypeFlags.Any | ts.TypeFlags.Unknown)) {
      return null;
    } else if (part.flags & ts.TypeFlags.StringLike) {
      kinds.add('string');
    } else if (part.flags & ts.TypeFlags.NumberLike) {
      kinds.add('number');
    } else if (part.flags & ts.TypeFlags.BooleanLike) {
      kinds.add('boolean');
    } else if (checker.isArrayType(part) || checker.isTupleType(part)) {
      kinds.add('array');
    } else if (part.flags & (ts.TypeFlags.Object | ts.TypeFlags.NonPrimitive)) {
      kinds.add('object');
    } else {
      kinds.add(checker.typeToString(part));
    }
  }
  return kinds;
}

function sameKinds(a: Set<string>, b: Set<string>): boolean {
  return a.size === b.size && [...a].every(kind => b.has(kind));
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
  const expectedKinds = schemaKinds(raw, defs);
  const actualKinds = typeKinds(type);
  if (expectedKinds && actualKinds && !sameKinds(expectedKinds, actualKinds)) {
    problems.push(
      `${where}: the schema has ${[...expectedKinds].sort().join(' | ')}, TypeScript ${[...actualKinds].sort().join(' | ')}`
    );
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
  } else if (
    schema.type === 'object' &&
    typeof schema.additionalProperties === 'object'
  ) {
    const values = checker.getIndexInfoOfType(parts[0], ts.IndexKind.String);
    if (values) {
      compareValue(
        schema.additionalProperties,
        values.type,
        defs,
        `${where}{}`,
        problems
      );
    }
  }
}

/** Every difference between one discriminated union of the schema and its TypeScript union. */
function compareUnion(
  group: Json,
  union: ts.Type,
  name: string,
  ignore: Set<string>
): string[] {
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
        problems,
        ignore
      );
    }
  }
  return problems;
}

/** Every difference between the schema's sections and the TypeScript types its `typescript` table names. */
function contractProblems(schema: Json): string[] {
  const problems: string[] = [];
  for (const [section, mirror] of Object.entries(schema.typescript as Json)) {
    const file = sourceFile(mirror.file);
    // The conversation log adds its envelope to every event, outside the event models.
    const ignore = section === 'events' ? ENVELOPE : new Set<string>();
    if (mirror.type) {
      problems.push(
        ...compareUnion(
          schema[section],
          exportedType(file, mirror.type),
          mirror.type,
          ignore
        )
      );
      continue;
    }
    const defs = schema[section].$defs;
    for (const model of schema[section].models as string[]) {
      const name = mirror.types[model];
      if (!name) {
        problems.push(`${section}.${model}: no TypeScript type named for it`);
        continue;
      }
      compareObject(
        defs[model],
        exportedType(file, name),
        defs,
        name,
        problems,
        ignore
      );
    }
  }
  return problems;
}

describe('the wire contract (contracts/wire.json)', () => {
  it('is what the TypeScript events, commands, notebook edits and REST bodies and replies say', () => {
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
    // Types, not only names: a number that became a string, a list that became a map, a value that may now
    // be null, a boolean in a REST reply that became a string.
    events.TurnStartEvent.properties.turn_id = { type: 'integer' };
    drifted.commands.$defs.ResumeCommand.properties.since_seq = {
      type: 'string'
    };
    const rest = drifted.rest.$defs;
    rest.SessionRecord.properties.created = { type: 'string' };
    rest.ToolInfo.properties.read_only = { type: 'string' };
    rest.PermissionsOverview.properties.saved = {
      type: 'object',
      additionalProperties: { type: 'string' }
    };
    rest.SessionDetail.properties.last_seq = {
      anyOf: [{ type: 'integer' }, { type: 'null' }]
    };
    rest.ErrorReply.properties.texts.additionalProperties = {
      type: 'string'
    };
    drifted.bridge_results.$defs.AppliedDelta.properties.notebook = {
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
      'AgentEvent["turn.start"].turn_id: the schema has number, TypeScript string',
      'ClientCommand["resume"].since_seq: the schema has string, TypeScript number',
      'ISessionRecord.created: the schema has string, TypeScript number',
      'ISessionList.sessions[].created: the schema has string, TypeScript number',
      'IServerInfo.tools[].read_only: the schema has string, TypeScript boolean',
      'IPermissionsOverview.saved: the schema has object, TypeScript array',
      'ISessionDetail.last_seq: may be null in the schema, not in TypeScript',
      'IErrorReply.texts{}: the schema has string, TypeScript object',
      'IAppliedDelta: field "notebook" is in the schema, not in TypeScript',
      'BridgeRequest["set_text"]: field "expected" is in TypeScript, not in the schema'
    ];
    for (const problem of expected) {
      expect(problems).toContain(problem);
    }
    expect(problems).toHaveLength(expected.length);
  });
});
