import { expect } from 'chai';
import sharp from 'sharp';
import { ImageRejectedError } from '../../src/media/image.js';
import { toProfilePicture } from '../../src/media/profile-picture.js';
import { animatedGif, corruptPng, pngImage } from '../helpers/media-fixtures.js';

/** The JPEG standard (Annex K) luminance table in zigzag order, which libjpeg scales by quality. */
const ANNEX_K_LUMINANCE = [
  16, 11, 12, 14, 12, 10, 16, 14, 13, 14, 18, 17, 16, 19, 24, 40, 26, 24, 22, 22, 24, 49, 35, 37, 29, 40, 58, 51, 61,
  60, 57, 51, 56, 55, 64, 72, 92, 78, 64, 68, 87, 69, 55, 56, 80, 109, 81, 87, 95, 98, 103, 104, 103, 62, 77, 113, 121,
  112, 100, 120, 92, 101, 103, 99,
];

/** libjpeg's table for a quality (jcparam.c): scale 200 − 2q for q ≥ 50. */
function tableFor(quality: number): number[] {
  const scale = quality < 50 ? 5000 / quality : 200 - 2 * quality;
  return ANNEX_K_LUMINANCE.map((v) => Math.min(255, Math.max(1, Math.floor((v * scale + 50) / 100))));
}

/** The first quantisation table of a JPEG (8-bit precision), as stored (zigzag order). */
function firstQuantTable(jpeg: Buffer): number[] {
  for (let i = 2; i + 4 < jpeg.length;) {
    const marker = jpeg[i + 1]!;
    const length = jpeg.readUInt16BE(i + 2);
    if (marker === 0xdb) return [...jpeg.subarray(i + 5, i + 5 + 64)];
    i += 2 + length;
  }
  throw new Error('no DQT segment');
}

async function rejected(input: Buffer): Promise<ImageRejectedError> {
  const err = await toProfilePicture(input).catch((e: unknown) => e);
  expect(err).to.be.instanceOf(ImageRejectedError);
  return err as ImageRejectedError;
}

describe('profile picture conversion', function () {
  this.timeout(20_000);

  it('makes a JPEG of quality 90 that fits inside 640x640, keeping the aspect ratio', async () => {
    const out = await toProfilePicture(await pngImage(1200, 800));
    const meta = await sharp(out).metadata();
    expect(meta.format).to.equal('jpeg');
    expect([meta.width, meta.height]).to.deep.equal([640, 427]);
    expect(firstQuantTable(out)).to.deep.equal(tableFor(90));
    expect(firstQuantTable(out)).not.to.deep.equal(tableFor(50));
  });

  it('never enlarges a small picture, and accepts JPEG and WebP input', async () => {
    const small = await toProfilePicture(await pngImage(100, 50));
    expect(await sharp(small).metadata()).to.include({ width: 100, height: 50, format: 'jpeg' });
    const jpeg = await sharp({ create: { width: 900, height: 1800, channels: 3, background: '#00ff00' } })
      .jpeg()
      .toBuffer();
    expect(await sharp(await toProfilePicture(jpeg)).metadata()).to.include({ width: 320, height: 640 });
    const webp = await sharp({ create: { width: 700, height: 700, channels: 3, background: '#ff00ff' } })
      .webp()
      .toBuffer();
    expect(await sharp(await toProfilePicture(webp)).metadata()).to.include({
      width: 640,
      height: 640,
      format: 'jpeg',
    });
  });

  it('takes the first frame of an animated GIF and paints transparency white', async () => {
    const source = await animatedGif();
    expect((await sharp(source).metadata()).pages).to.equal(2);
    const gif = await toProfilePicture(source);
    const { data, info } = await sharp(gif).raw().toBuffer({ resolveWithObject: true });
    expect([info.width, info.height]).to.deep.equal([40, 30]);
    expect(data[0]).to.be.above(200);
    expect(data[2]).to.be.below(60);
    const transparent = await sharp({
      create: { width: 20, height: 20, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } },
    })
      .png()
      .toBuffer();
    const flat = await sharp(await toProfilePicture(transparent))
      .raw()
      .toBuffer();
    expect(flat[0]).to.be.above(240);
  });

  it('sniffs the bytes: text, BMP and TIFF are refused whatever they are called', async () => {
    expect((await rejected(Buffer.from('<html>not an image</html>'))).problem).to.equal('not_image');
    const bmp = Buffer.concat([Buffer.from('BM'), Buffer.alloc(60)]);
    expect((await rejected(bmp)).problem).to.equal('unsupported');
    const tiff = await sharp({ create: { width: 10, height: 10, channels: 3, background: '#000' } })
      .tiff()
      .toBuffer();
    expect((await rejected(tiff)).problem).to.equal('unsupported');
  });

  it('reports undecodable data as corrupt', async () => {
    expect((await rejected(corruptPng())).problem).to.equal('corrupt');
  });
});
