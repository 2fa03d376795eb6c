import { expect } from 'chai';
import { AppError } from '../../src/errors.js';
import { OPUS_MIME, WAVEFORM_SAMPLES, prepareAudio, waveformOf } from '../../src/media/audio.js';
import { probeMedia, withTempFile } from '../../src/media/ffmpeg.js';
import { prepareMedia } from '../../src/media/outgoing-media.js';
import { pngImage, video, wavTone } from '../helpers/media-fixtures.js';

const MB = 1024 * 1024;

async function failure(work: Promise<unknown>): Promise<AppError> {
  const err = await work.catch((e: unknown) => e);
  expect(err, String(err)).to.be.instanceOf(AppError);
  return err as AppError;
}

describe('audio conversion (ffmpeg)', function () {
  this.timeout(60_000);

  it('converts a WAV to Ogg/Opus with its duration and a 64-value waveform from the samples', async () => {
    const audio = await prepareAudio(wavTone(3), { opus: true, maxBytes: 16 * MB });
    expect(audio.converted).to.equal(true);
    expect(audio.mimetype).to.equal(OPUS_MIME);
    expect(audio.data.subarray(0, 4).toString('latin1')).to.equal('OggS');
    const probe = await withTempFile(audio.data, (path) => probeMedia(path));
    expect(probe.audioCodec).to.equal('opus');
    expect(probe.format).to.equal('ogg');
    expect(probe.durationSeconds).to.be.closeTo(3, 0.1);
    expect(audio.seconds).to.equal(3);
    expect(audio.waveform).to.have.length(WAVEFORM_SAMPLES);
    // Loud first half, a quarter as loud after: the waveform follows the signal, it is not a constant.
    const first = [...audio.waveform.subarray(2, 30)];
    const second = [...audio.waveform.subarray(34, 62)];
    expect(Math.max(...audio.waveform)).to.equal(100);
    expect(Math.min(...first)).to.be.above(80);
    expect(Math.max(...second)).to.be.within(15, 40);
  });

  it('keeps audio that is already Ogg/Opus; converts WAV even when no voice note is asked (clients do not play it)', async () => {
    const opus = (await prepareAudio(wavTone(1), { opus: true, maxBytes: 16 * MB })).data;
    const again = await prepareAudio(opus, { opus: true, maxBytes: 16 * MB });
    expect(again.converted).to.equal(false);
    expect(again.data.equals(opus)).to.equal(true);
    expect(again.seconds).to.equal(1);
    // A WAV is not something other clients play as a message: converted even when Opus is not required.
    expect((await prepareAudio(wavTone(1), { opus: false, maxBytes: 16 * MB })).converted).to.equal(true);
  });

  it('refuses media without audio (media_validation_failed), never a 500', async () => {
    const png = await failure(prepareAudio(await pngImage(10, 10), { opus: true, maxBytes: MB }));
    expect(png.code).to.equal('media_validation_failed');
    const garbage = await failure(
      prepareAudio(Buffer.from('definitely not audio, just text'), { opus: true, maxBytes: MB }),
    );
    expect(garbage.code).to.equal('media_validation_failed');
  });

  it('computes peaks from PCM and leaves silence at zero', () => {
    const pcm = Buffer.alloc(64 * 2 * 10);
    for (let i = 0; i < 64 * 10; i++) pcm.writeInt16LE(i < 320 ? 1000 : -4000, i * 2);
    const wave = waveformOf(pcm);
    expect(wave).to.have.length(64);
    expect(wave[0]).to.equal(25);
    expect(wave[63]).to.equal(100);
    expect([...waveformOf(Buffer.alloc(1000))].every((v) => v === 0)).to.equal(true);
  });
});

describe('outgoing media preparation', function () {
  this.timeout(60_000);

  it('checks a video: MP4 with its length; longer than 30 s refused; WebM unsupported; an image is not a video', async () => {
    const short = await prepareMedia('video', await video(2), {
      opusAudio: true,
      maxVideoSeconds: 30,
      maxBytes: 16 * MB,
    });
    expect(short).to.include({ kind: 'video', mimetype: 'video/mp4', seconds: 2 });
    const long = await failure(
      prepareMedia('video', await video(35), { opusAudio: true, maxVideoSeconds: 30, maxBytes: 16 * MB }),
    );
    expect(long.code).to.equal('media_validation_failed');
    expect(long.message).to.equal('The video lasts 35.0 s; at most 30 s are allowed');
    const webm = await failure(prepareMedia('video', await video(1, 'webm'), { opusAudio: true, maxBytes: 16 * MB }));
    expect(webm.code).to.equal('unsupported_media_type');
    const image = await failure(prepareMedia('video', await pngImage(8, 8), { opusAudio: true, maxBytes: 16 * MB }));
    expect(image.code).to.equal('media_validation_failed');
  });

  it('re-encodes images as JPEG and refuses a declared type that contradicts the kind', async () => {
    const image = await prepareMedia('image', await pngImage(50, 40), { opusAudio: false, maxBytes: MB });
    expect(image.mimetype).to.equal('image/jpeg');
    expect(image.data.subarray(0, 3)).to.deep.equal(Buffer.from([0xff, 0xd8, 0xff]));
    const mismatch = await failure(
      prepareMedia('image', await pngImage(5, 5), { declaredMime: 'video/mp4', opusAudio: false, maxBytes: MB }),
    );
    expect(mismatch.message).to.equal('mimeType video/mp4 does not match type image');
  });
});
