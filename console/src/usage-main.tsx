import { render } from 'preact';
import { UsagePage } from './pages/usage-page.tsx';
import './console.css';

render(<UsagePage />, document.getElementById('app')!);
