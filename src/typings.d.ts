declare module '*.svg' {
  const svgstr: string;
  export default svgstr;
}

// Only the fields the frontend reads; the bundler (and jest) load the real file.
declare module '*/package.json' {
  const packageJson: { name: string; version: string };
  export default packageJson;
}
