using System.Text;
using Courier.Protocols.JetStream;
using Xunit;

namespace Courier.Protocols.Tests.JetStream;

/// <summary>nats-server's isEmptyRequest: what a stepdown (or another body-less API) takes as no body.</summary>
public sealed class ApiRequestsTests
{
    [Theory]
    [InlineData("")]
    [InlineData("{}")]
    [InlineData(" { } ")]
    [InlineData("{\n}")]
    public void No_body_or_an_object_without_members_is_empty(string body) =>
        Assert.True(ApiRequests.IsEmpty(Encoding.UTF8.GetBytes(body)));

    [Theory]
    [InlineData("{\"placement\":{}}")]
    [InlineData("[]")]
    [InlineData("null")]
    [InlineData("x")]
    [InlineData("{")]
    [InlineData("{} {}")]
    public void Members_other_values_or_text_that_is_not_json_are_a_body(string body) =>
        Assert.False(ApiRequests.IsEmpty(Encoding.UTF8.GetBytes(body)));
}
