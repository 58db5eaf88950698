import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { judgeTextLayer } from "./text-layer.js";

describe("a PDF page's text layer: trusted, or read by OCR", () => {
  it("trusts English and Malay prose, tables of figures, and other scripts", () => {
    for (const text of [
      "Bekalan air di Klang akan terganggu pada 14 Mac 2024 dari jam 9.00 pagi hingga 6.00 petang kerana kerja penyelenggaraan paip utama.",
      "Water supply in Klang will be interrupted on 14 March 2024 from 9.00 am to 6.00 pm for maintenance of the main pipe.",
      "| Negeri | 2022 | 2023 |\n| Kelantan | 41,870 | 12,004 |\n| Pahang | 8,210 | 30,511 |\n| Johor | 1,200 | 55,000 |",
      "بكالن اير د کلڠ اکن ترڬڠڬو ڤد ١٤ مچ ٢٠٢٤ دري جم ٩ ڤاڬي هيڠڬ ٦ ڤتڠ",
      "吉隆坡的供水将于2024年3月14日上午9时至下午6时中断，因为主要管道需要维修。",
    ]) {
      assert.equal(judgeTextLayer(text).verdict, "usable", text);
    }
  });

  it("finds a scan: no text, or a few stray characters", () => {
    assert.equal(judgeTextLayer("").verdict, "none");
    assert.equal(judgeTextLayer("  \n\t ").verdict, "none");
    assert.equal(judgeTextLayer("3").verdict, "too_little");
    assert.equal(judgeTextLayer("SULIT   Muka 3 / 12").verdict, "too_little");
  });

  it("finds garbage from a broken font encoding: private-use glyphs, replacement characters, letters that are not words", () => {
    assert.equal(judgeTextLayer("\uE001\uE002\uE003 \uE004\uE005\uE006\uE007 \uE010\uE011 Kelantan \uE020\uE021\uE022").verdict, "garbage");
    assert.equal(judgeTextLayer("B\uFFFDk\uFFFDl\uFFFDn \uFFFD\uFFFDr d\uFFFD Kl\uFFFDng \uFFFDk\uFFFDn t\uFFFDrg\uFFFDngg\uFFFD").verdict, "garbage");
    // A shifted encoding: every letter moved, so no word has its vowels.
    const shifted = "Cflbmbo bjs ej Lmboh blbo ufshbohhv qbeb 14 Nbd 2024 ebsj kbn 9.00 qbhj".replace(/[aeiou]/g, "x");
    assert.equal(judgeTextLayer(shifted).verdict, "garbage");
    const report = judgeTextLayer("xzqwrt pldkfj wqzxcv bnmlkj trwqzx plmnbv qwrtzx");
    assert.equal(report.verdict, "garbage");
    assert.ok(report.wordShare < 0.6);
  });
});
