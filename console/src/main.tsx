import { render } from 'preact';
import { AppShell } from './app-shell.tsx';
import './console.css';

render(<AppShell />, document.getElementById('app')!);
