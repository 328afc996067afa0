#!/usr/bin/env node
// The package bin. Node 24 runs the TypeScript sources directly (type stripping),
// so this shim only hands over to the CLI entry point.
import '../src/cli/main.ts';
