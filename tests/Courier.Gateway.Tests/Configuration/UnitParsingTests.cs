using Courier.Gateway.Configuration;
using Courier.Protocols;
using Xunit;

namespace Courier.Gateway.Tests.Configuration;

public sealed class UnitParsingTests
{
    [Theory]
    [InlineData("0s", 0L)]
    [InlineData("0", 0L)]
    [InlineData("10s", 10_000L)]
    [InlineData("2m", 120_000L)]
    [InlineData("1h30m", 5_400_000L)]
    [InlineData("500ms", 500L)]
    [InlineData("1.5s", 1_500L)]
    [InlineData(".5s", 500L)]
    [InlineData("1m30.5s", 90_500L)]
    [InlineData("-2s", -2_000L)]
    [InlineData("+3s", 3_000L)]
    [InlineData("1000us", 1L)]
    [InlineData("1000\u00b5s", 1L)]
    [InlineData("2000000ns", 2L)]
    [InlineData("24h", 86_400_000L)]
    public void Durations_follow_go_time_ParseDuration(string text, long milliseconds)
    {
        Assert.True(GoDuration.TryParse(text, out var value, out var error), error);

        Assert.Equal(TimeSpan.FromMilliseconds(milliseconds), value);
    }

    [Theory]
    [InlineData("", "invalid duration")]
    [InlineData("10", "missing unit")]
    [InlineData("10x", "unknown unit \"x\"")]
    [InlineData("1d", "unknown unit \"d\"")]
    [InlineData("abc", "invalid duration")]
    [InlineData("1..5s", "invalid duration")]
    [InlineData("-", "invalid duration")]
    [InlineData("9999999999999h", "invalid duration")]
    public void Bad_durations_are_refused_with_go_messages(string text, string message)
    {
        Assert.False(GoDuration.TryParse(text, out _, out var error));

        Assert.Contains(message, error);
    }

    [Theory]
    [InlineData("512", 512L)]
    [InlineData("1k", 1000L)]
    [InlineData("1kb", 1024L)]
    [InlineData("1MB", 1024L * 1024)]
    [InlineData("1mib", 1024L * 1024)]
    [InlineData("3g", 3_000_000_000L)]
    public void Size_strings_use_the_config_suffixes(string text, long expected)
    {
        Assert.True(ByteSize.TryParse(text, out var value, out var error), error);

        Assert.Equal(expected, value);
    }

    [Theory]
    [InlineData("")]
    [InlineData("MB")]
    [InlineData("1 MB")]
    [InlineData("1x")]
    [InlineData("1kbb")]
    [InlineData("99999999999999999999")]
    [InlineData("10000000000GB")]
    public void Bad_size_strings_are_refused(string text)
    {
        Assert.False(ByteSize.TryParse(text, out _, out var error));

        Assert.NotNull(error);
    }

    [Theory]
    [InlineData("", 0L)]
    [InlineData("1K", 1024L)]
    [InlineData("2M", 2L << 20)]
    [InlineData("10G", 10L << 30)]
    [InlineData("1T", 1L << 40)]
    public void JetStream_storage_strings_are_binary_with_upper_case_suffix(string text, long expected)
    {
        // nats-server getStorageSize: K, M, G, T only, each a power of 1024.
        Assert.True(ByteSize.TryParseStorageSize(text, out var value, out var error), error);

        Assert.Equal(expected, value);
    }

    [Theory]
    [InlineData("1k")]
    [InlineData("1GB")]
    [InlineData("100")]
    [InlineData("xG")]
    public void JetStream_storage_strings_refuse_other_forms(string text)
    {
        Assert.False(ByteSize.TryParseStorageSize(text, out _, out _));
    }
}
