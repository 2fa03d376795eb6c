import type { PixPayment } from './msgnet-driver.js';

export const PIX_KEY_TYPES: readonly PixPayment['keyType'][] = ['CPF', 'CNPJ', 'EMAIL', 'PHONE', 'RANDOM'];

/** The two check digits of a CPF (weights 10..2, then 11..2) or a CNPJ (5..2 9..2, then 6..2 9..2). */
function checkDigitsValid(digits: string, weights: number[][]): boolean {
  if (/^(\d)\1+$/.test(digits)) return false;
  const body = digits.slice(0, digits.length - 2);
  let withChecks = body;
  for (const w of weights) {
    const sum = w.reduce((acc, weight, i) => acc + weight * Number(withChecks[i]), 0);
    const rest = sum % 11;
    withChecks += String(rest < 2 ? 0 : 11 - rest);
  }
  return withChecks === digits;
}

const range = (from: number, to: number) => Array.from({ length: from - to + 1 }, (_, i) => from - i);
const CPF_WEIGHTS = [range(10, 2), range(11, 2)];
const CNPJ_WEIGHTS = [
  [...range(5, 2), ...range(9, 2)],
  [...range(6, 2), ...range(9, 2)],
];

/**
 * Why a PIX key is not a key of its type (Banco Central's formats: CPF and CNPJ with their check digits,
 * an e-mail of at most 77 characters, a phone as +<country><number>, a random key as a UUID); undefined when
 * it is one. Punctuation of CPFs and CNPJs (`123.456.789-09`) is accepted.
 */
export function pixKeyProblem(keyType: PixPayment['keyType'], key: string): string | undefined {
  switch (keyType) {
    case 'CPF': {
      const digits = key.replace(/[.\-\s]/g, '');
      if (!/^\d{11}$/.test(digits)) return 'a CPF key has 11 digits';
      return checkDigitsValid(digits, CPF_WEIGHTS) ? undefined : 'the CPF check digits do not match';
    }
    case 'CNPJ': {
      const digits = key.replace(/[.\-/\s]/g, '');
      if (!/^\d{14}$/.test(digits)) return 'a CNPJ key has 14 digits';
      return checkDigitsValid(digits, CNPJ_WEIGHTS) ? undefined : 'the CNPJ check digits do not match';
    }
    case 'EMAIL':
      return key.length <= 77 && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(key)
        ? undefined
        : 'an EMAIL key is an e-mail address';
    case 'PHONE':
      return /^\+[1-9]\d{9,14}$/.test(key) ? undefined : 'a PHONE key is +<country code><number>, e.g. +5511999998888';
    case 'RANDOM':
      return /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(key)
        ? undefined
        : 'a RANDOM key is a UUID';
  }
}
