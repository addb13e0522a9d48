using Xunit;
using Xunit.Abstractions;

namespace Courier.Fuzz.Tests;

/// <summary>
/// The fuzz smoke run of the default test command: every target replays its corpus (fuzz/corpus, the seeds
/// plus what AFL++ runs kept, crash regressions included) and then a bounded, seeded run of mutations of it
/// (bit flips, byte changes, insertions, deletions, splices). A target must return normally on every input.
/// The coverage-guided long run is fuzz/run.sh (see fuzz/README.md).
/// </summary>
public sealed class FuzzSmokeTests(ITestOutputHelper output)
{
    private const int Mutations = 1500;                              // inputs per target beyond the corpus
    private static readonly TimeSpan Budget = TimeSpan.FromSeconds(20); // per target, on a loaded machine

    public static TheoryData<string> TargetNames() => [.. Targets.Names];

    [Theory]
    [MemberData(nameof(TargetNames))]
    public void Fuzz_target_survives_its_corpus_and_a_bounded_random_run(string target)
    {
        var run = Targets.Get(target);
        var corpus = Corpus(target);
        Assert.NotEmpty(corpus);
        foreach (var input in corpus)
        {
            run(input);
        }

        var random = new Random(target.GetHashCode(StringComparison.Ordinal) & 0x7fff);
        var started = DateTime.UtcNow;
        var done = 0;
        for (; done < Mutations && DateTime.UtcNow - started < Budget; done++)
        {
            var input = Mutate(corpus[random.Next(corpus.Count)], corpus[random.Next(corpus.Count)], random);
            try
            {
                run(input);
            }
            catch (Exception e)
            {
                throw new InvalidOperationException($"{target} failed on input {Convert.ToHexString(input)}", e);
            }
        }

        output.WriteLine($"{target}: {corpus.Count} corpus inputs, {done} mutations");
        Assert.True(done > 0);
    }

    private static List<byte[]> Corpus(string target)
    {
        var dir = AppContext.BaseDirectory;
        while (dir is not null && !Directory.Exists(Path.Combine(dir, "fuzz", "corpus")))
        {
            dir = Path.GetDirectoryName(dir);
        }

        Assert.NotNull(dir);
        return [.. Directory.GetFiles(Path.Combine(dir, "fuzz", "corpus", target)).Order(StringComparer.Ordinal).Select(File.ReadAllBytes)];
    }

    private static byte[] Mutate(byte[] input, byte[] other, Random random)
    {
        var data = new List<byte>(input);
        var edits = 1 + random.Next(8);
        for (var i = 0; i < edits; i++)
        {
            var at = data.Count == 0 ? 0 : random.Next(data.Count);
            switch (random.Next(6))
            {
                case 0 when data.Count > 0:
                    data[at] ^= (byte)(1 << random.Next(8));
                    break;
                case 1 when data.Count > 0:
                    data[at] = (byte)random.Next(256);
                    break;
                case 2:
                    data.Insert(at, (byte)random.Next(256));
                    break;
                case 3 when data.Count > 0:
                    data.RemoveRange(at, Math.Min(data.Count - at, 1 + random.Next(16)));
                    break;
                case 4 when data.Count > 0:
                    data[at] = (byte)(random.Next(2) == 0 ? 0 : 0xFF); // boundary values: lengths, flags
                    break;
                default:
                    var from = random.Next(other.Length + 1);
                    data.InsertRange(at, other.Skip(from).Take(random.Next(64)));
                    break;
            }
        }

        return [.. data];
    }
}
