using System.Text.Json;
using NATS.Client.Core;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Requests and events whose payload is one JSON document (system-account requests, monitoring over NATS, advisories).</summary>
public static class NatsJson
{
    /// <summary>Sends <paramref name="body"/> to <paramref name="subject"/> and parses the reply.</summary>
    public static async Task<JsonElement> RequestAsync(NatsConnection nats, string subject, string body = "")
    {
        var reply = await nats.RequestAsync<string, string>(subject, body);
        return JsonDocument.Parse(reply.Data!).RootElement.Clone();
    }

    /// <summary>The next message of <paramref name="sub"/>, parsed.</summary>
    public static async Task<JsonElement> NextAsync(INatsSub<byte[]> sub, CancellationToken ct)
    {
        var msg = await sub.Msgs.ReadAsync(ct);
        return JsonDocument.Parse(msg.Data!).RootElement.Clone();
    }
}
