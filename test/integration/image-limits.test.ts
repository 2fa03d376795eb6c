import { expect } from 'chai';
import { ImageRejectedError } from '../../src/media/image.js';
import { toProfilePicture } from '../../src/media/profile-picture.js';
import { pixelBombPng } from '../helpers/media-fixtures.js';

async function rejected(input: Buffer): Promise<ImageRejectedError> {
  const err = await toProfilePicture(input).catch((e: unknown) => e);
  expect(err).to.be.instanceOf(ImageRejectedError);
  return err as ImageRejectedError;
}

// How long a refusal takes is measured on the wall clock, so it is checked here rather than in unit/.
describe('profile picture conversion: limits measured on the wall clock', function () {
  this.timeout(20_000);

  it('refuses a decompression bomb (small file, 900 MP) from its header, quickly', async () => {
    const bomb = pixelBombPng();
    expect(bomb.length).to.be.below(200_000);
    const started = Date.now();
    const err = await rejected(bomb);
    expect(err.problem).to.equal('too_large');
    expect(err.message).to.equal('the image is 30000x30000 pixels; at most 40000000 pixels are accepted');
    expect(Date.now() - started).to.be.below(2000);
  });
});
