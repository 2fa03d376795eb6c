import { expect } from 'chai';
import { ValidationError } from '../../src/errors.js';
import { CREATION_ALIASES, parseCreationBody } from '../../src/instances/creation-body.js';
import { checkTriggerPattern } from '../../src/instances/trigger-pattern.js';

function refusal(body: unknown): string {
  try {
    parseCreationBody(body);
  } catch (err) {
    expect(err).to.be.instanceOf(ValidationError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('parseCreationBody', () => {
  it('takes the seven settings flat or nested', () => {
    expect(parseCreationBody({ name: 'a', ignoreStatus: true }).settingsPatch).to.deep.equal({ ignoreStatus: true });
    expect(parseCreationBody({ name: 'a', settings: { autoReadMessages: true } }).settingsPatch).to.deep.equal({
      autoReadMessages: true,
    });
    expect(refusal({ name: 'a', ignoreStatus: true, settings: { ignoreStatus: false } })).to.include("'ignoreStatus'");
  });

  it('maps every alias and refuses both spellings at once', () => {
    expect(parseCreationBody({ name: 'a', proxyUsername: 'u' }).proxyUser).to.equal('u');
    expect(parseCreationBody({ name: 'a', chatwootApiToken: 't' }).helpdeskApiToken).to.equal('t');
    expect(parseCreationBody({ name: 'a', typebotTriggerType: 'all' }).chatbotTriggerType).to.equal('all');
    expect(parseCreationBody({ name: 'a', webhookMediaBase64: true }).webhookBase64).to.equal(true);
    expect(CREATION_ALIASES.typebotUrl).to.equal('chatbotUrl');
    expect(CREATION_ALIASES.chatwootReopenResolved).to.equal('helpdeskReopenResolved');
    const msg = refusal({ name: 'a', chatwootEnabled: true, helpdeskEnabled: true });
    expect(msg).to.include('chatwootEnabled').and.to.include('helpdeskEnabled');
  });

  it('treats null as absent and refuses wrong types and unknown fields', () => {
    expect(parseCreationBody({ name: 'a', proxyHost: null }).proxyHost).to.equal(undefined);
    expect(refusal({ name: 'a', proxyEnabled: 'yes' })).to.match(/^Invalid request body: field 'proxyEnabled'/);
    expect(refusal({ name: 'a', surprise: 1 })).to.equal("Invalid request body: unknown field 'surprise'");
    expect(refusal({ name: 'a', settings: { colour: 'red' } })).to.include("'colour'");
    expect(refusal({ name: 'a', settings: [] })).to.include("'settings'");
    expect(refusal([])).to.equal('Invalid request body: expected a JSON object');
  });

  it('requires a safe name and a sane custom token', () => {
    expect(refusal({})).to.equal('Instance name is required');
    expect(refusal({ name: '   ' })).to.equal('Instance name is required');
    for (const name of ['../x', 'a b', 'a\u0000b', '-lead', 'x'.repeat(65), '<script>']) {
      expect(refusal({ name })).to.match(/^Invalid instance name/);
    }
    expect(parseCreationBody({ name: ' sales_bot-1 ' }).name).to.equal('sales_bot-1');
    expect(refusal({ name: 'a', token: 'short' })).to.match(/^Invalid instance token/);
    expect(refusal({ name: 'a', token: 'has space in it' })).to.match(/^Invalid instance token/);
  });
});

describe('checkTriggerPattern', () => {
  it('accepts ordinary patterns', () => {
    for (const p of ['^hello', 'price|cost', '\\d{3}-\\d{4}', '(yes|no)$']) {
      expect(checkTriggerPattern(p), p).to.equal(undefined);
    }
  });

  it('refuses invalid, back-referencing, nested-quantifier and overlong patterns', () => {
    for (const p of ['(', '(a+)+', '(a*)*b', '(\\w+\\s?)*$', '(a)\\1', 'x'.repeat(300), '(a{1,5})+']) {
      expect(checkTriggerPattern(p), p).to.be.a('string');
    }
  });
});
