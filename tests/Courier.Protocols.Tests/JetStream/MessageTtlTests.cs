using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Protocols.Tests.JetStream;

/// <summary><c>Nats-TTL</c> values as nats-server's parseMessageTTL reads them.</summary>
public sealed class MessageTtlTests
{
    [Theory]
    [InlineData("5s", 5)]
    [InlineData("1m30s", 90)]
    [InlineData("1.9s", 1)]
    [InlineData("1h", 3600)]
    [InlineData("60", 60)]
    [InlineData("never", MessageTtl.Never)]
    [InlineData("Never", MessageTtl.Never)]
    public void Valid_values(string value, long seconds)
    {
        Assert.True(MessageTtl.TryParse(value, out var parsed));
        Assert.Equal(seconds, parsed);
    }

    [Theory]
    [InlineData("0")] // a duration of 0: below a second
    [InlineData("500ms")]
    [InlineData("-5s")]
    [InlineData("-5")]
    [InlineData("abc")]
    [InlineData("5x")]
    public void Invalid_values(string value) => Assert.False(MessageTtl.TryParse(value, out _));

    [Fact]
    public void A_header_block_without_the_header_or_with_an_empty_value_has_no_ttl()
    {
        Assert.True(MessageTtl.TryRead("NATS/1.0\r\nOther: 1\r\n\r\n"u8, out var none));
        Assert.Equal(0, none);
        Assert.True(MessageTtl.TryRead("NATS/1.0\r\nNats-TTL: \r\n\r\n"u8, out var empty));
        Assert.Equal(0, empty);
        Assert.False(MessageTtl.TryRead("NATS/1.0\r\nNats-TTL: soon\r\n\r\n"u8, out _));
    }
}
