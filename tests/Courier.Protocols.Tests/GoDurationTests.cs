using Xunit;

namespace Courier.Protocols.Tests;

/// <summary>Durations as Go's time.Duration.String() writes them (nats-server's status texts use it).</summary>
public sealed class GoDurationTests
{
    [Theory]
    [InlineData(0L, "0s")]
    [InlineData(1L, "1ns")]
    [InlineData(999L, "999ns")]
    [InlineData(1_000L, "1µs")]
    [InlineData(1_500L, "1.5µs")]
    [InlineData(1_000_000L, "1ms")]
    [InlineData(100_000_000L, "100ms")]
    [InlineData(1_234_567L, "1.234567ms")]
    [InlineData(1_000_000_000L, "1s")]
    [InlineData(1_500_000_000L, "1.5s")]
    [InlineData(60_000_000_000L, "1m0s")]
    [InlineData(90_000_000_000L, "1m30s")]
    [InlineData(3_600_000_000_000L, "1h0m0s")]
    [InlineData(3_723_400_000_000L, "1h2m3.4s")]
    [InlineData(-1_500_000_000L, "-1.5s")]
    public void Formats_as_go(long nanoseconds, string expected) => Assert.Equal(expected, GoDuration.Format(nanoseconds));
}
