import './base.css';
import './mcp.css';
