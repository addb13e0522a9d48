using System.Text;
using Xunit;

namespace Courier.Fuzz.Tests;

/// <summary>
/// The filestore target runs recovery on files in memory; these check it sees what real files give, so
/// what the fuzzer explores is what the server does on disk.
/// </summary>
public sealed class FileStoreTargetTests
{
    [Fact]
    public void The_seed_recovers_the_same_messages_in_memory_as_on_disk()
    {
        var seed = Targets.FileStoreSeed();
        var onDisk = Report(seed, onDisk: true);
        Assert.Equal(onDisk, Report(seed, onDisk: false));
        Assert.Contains(" orders.", onDisk, StringComparison.Ordinal); // recovery reached messages, not just a header
    }

    [Fact]
    public void Damaged_seeds_recover_the_same_in_memory_as_on_disk()
    {
        var seed = Targets.FileStoreSeed();
        var random = new Random(14);
        for (var trial = 0; trial < 60; trial++)
        {
            var input = (byte[])seed.Clone();
            if (trial % 2 == 0)
            {
                input = input[..random.Next(input.Length)];                  // a truncation
            }
            else
            {
                input[random.Next(input.Length)] ^= (byte)(1 << random.Next(8)); // a flipped bit
            }

            Assert.Equal(Report(input, onDisk: true), Report(input, onDisk: false));
        }
    }

    private static string Report(byte[] input, bool onDisk)
    {
        var report = new StringBuilder();
        Targets.RecoverStore(input, onDisk, report);
        return report.ToString();
    }
}
