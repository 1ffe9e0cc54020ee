import { LabIcon } from '@jupyterlab/ui-components';

import hdspAgentSvg from '../style/icons/hdsp-agent.svg';

export const hdspAgentIcon = new LabIcon({
  name: 'hdsp-agent:icon',
  svgstr: hdspAgentSvg
});
