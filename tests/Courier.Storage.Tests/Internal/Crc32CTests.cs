using System.Text;
using Courier.Storage.Internal;
using Xunit;

namespace Courier.Storage.Tests.Internal;

/// <summary>CRC-32C against the standard check values, and the instruction path against the table.</summary>
public sealed class Crc32CTests
{
    [Theory]
    [InlineData("", 0x00000000u)]
    [InlineData("a", 0xC1D04330u)]
    [InlineData("123456789", 0xE3069283u)] // the CRC-32C check value (RFC 3720 B.4 polynomial)
    [InlineData("The quick brown fox jumps over the lazy dog", 0x22620404u)]
    public void Matches_the_known_check_values(string input, uint expected) =>
        Assert.Equal(expected, Crc32C.Compute(Encoding.ASCII.GetBytes(input)));

    [Fact]
    public void Thirty_two_zero_bytes_give_the_iscsi_test_vector() =>
        Assert.Equal(0x8A9136AAu, Crc32C.Compute(new byte[32]));

    [Fact]
    public void Hardware_software_and_incremental_paths_agree_at_every_length()
    {
        var data = new byte[300];
        new Random(3).NextBytes(data);
        for (var length = 0; length <= data.Length; length++)
        {
            var span = data.AsSpan(0, length);
            var expected = ~Crc32C.UpdateSoftware(Crc32C.Start, span);
            Assert.Equal(expected, Crc32C.Compute(span));
            var split = length / 3;
            Assert.Equal(expected, Crc32C.Finish(Crc32C.Append(Crc32C.Append(Crc32C.Start, span[..split]), span[split..])));
        }
    }
}
