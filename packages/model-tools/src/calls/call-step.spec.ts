import { stepOfCallId } from './call-step';

describe('stepOfCallId', () => {
  const names = ['get_weather', 'weather.get'];

  it('keeps the ids providers and frameworks make unique', () => {
    for (const id of [
      'call_DdmO9pD3xa9XTPNJ32zg2hcA', // OpenAI
      'toolu_01A09q90qw90lq917835lq9', // Anthropic
      'fc_67ca09c5efe0819096d0511c92b8c890096610f474011cc0', // OpenAI Responses item id
      'aBcD3fGh1', // Mistral (9 characters)
      '6e2e1f0a-1c4b-4d6f-9a43-0d4c3d3c6a11', // a UUID, as LangChain generates for Gemini
      'call_4162774', // Gemini's own ids: a long number
    ]) {
      expect(stepOfCallId(id, names)).toBe(id);
    }
  });

  it('drops ids that repeat across turns or calls: numbered per response, derived from the name, empty or a placeholder', () => {
    for (const id of [
      '',
      ' ',
      'null',
      'undefined',
      '0',
      '12',
      'call_0',
      'call-3',
      'tool_1',
      'fc_2',
      'c1',
      'get_weather',
      'call-get_weather',
      'call_get_weather_1',
      'weather.get',
      'GET_WEATHER',
    ]) {
      expect(stepOfCallId(id, names)).toBeUndefined();
    }
    expect(stepOfCallId(undefined, names)).toBeUndefined();
    expect(stepOfCallId('x'.repeat(1_001), names)).toBeUndefined();
  });
});
