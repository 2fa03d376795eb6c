import { expect } from 'chai';
import { firstLink, pageCard } from '../../src/media/link-preview.js';

describe('link preview parsing', () => {
  it('finds the first http(s) link, without the punctuation that ends a sentence', () => {
    expect(firstLink('see https://example.com/a?b=1.')).to.equal('https://example.com/a?b=1');
    expect(firstLink('(http://x.org/page), then https://y.org')).to.equal('http://x.org/page');
    expect(firstLink('ftp://x.org and www.example.com')).to.equal(undefined);
  });

  it('reads Open Graph tags first, then the title and description tags, in either attribute order', () => {
    const og = pageCard(
      `<meta content="An &quot;OG&quot; title" property="og:title"><title>Plain</title>
       <meta name="description" content="Plain description"><meta property="og:image" content="https://i/x.jpg">`,
    );
    expect(og).to.deep.equal({ title: 'An "OG" title', description: 'Plain description', image: 'https://i/x.jpg' });
    expect(pageCard('<title>\n  Just a   title </title>')).to.deep.equal({ title: 'Just a title' });
    expect(pageCard('<body>nothing</body>')).to.deep.equal({});
  });
});
