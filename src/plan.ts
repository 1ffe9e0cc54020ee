/**
 * The agent's plan (its `todo` tool): the latest list it sent in the conversation, shown as a checklist.
 */
import { AgentEvent } from './events';

export interface IPlanItem {
  text: string;
  status: 'pending' | 'in_progress' | 'done';
}

/**
 * The plan after `event`, given the plan before it: each `todo` call replaces the whole list.
 */
export function foldPlan(plan: IPlanItem[], event: AgentEvent): IPlanItem[] {
  if (event.type === 'plan.approved') {
    // The approved plan is the agent's todo list from the start; its todo calls then update it.
    return event.items.map(text => ({ text, status: 'pending' }));
  }
  if (
    event.type !== 'tool.status' ||
    event.name !== 'todo' ||
    event.status !== 'done'
  ) {
    return plan;
  }
  const items = (event.details as any)?.plan;
  if (!Array.isArray(items)) {
    return plan;
  }
  return items
    .filter(item => item && typeof item.text === 'string')
    .map(item => ({
      text: item.text,
      status: ['pending', 'in_progress', 'done'].includes(item.status)
        ? item.status
        : 'pending'
    }));
}
