using System.Text;
using System.Text.Json;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>Raw `$JS.API` requests over a <see cref="WireClient"/>: replies come to one inbox, `_INBOX.api`.</summary>
internal static class JetStreamApiWire
{
    private const string Inbox = "_INBOX.api";

    /// <summary>Connects, handshakes and subscribes the API inbox.</summary>
    public static async Task<WireClient> ConnectAsync(ServerProcess server)
    {
        var c = await WireClient.ConnectAsync(server);
        await c.HandshakeAsync();
        await c.SendAsync($"SUB {Inbox} 1\r\n");
        return c;
    }

    /// <summary>Sends <paramref name="body"/> to <paramref name="subject"/> and returns the reply on the inbox (other messages are passed over).</summary>
    public static async Task<JsonDocument> RequestAsync(WireClient c, string subject, string body)
    {
        await c.SendAsync($"PUB {subject} {Inbox} {Encoding.UTF8.GetByteCount(body)}\r\n{body}\r\n");
        while (true)
        {
            var reply = await c.ExpectMsgAsync();
            if (reply.Subject == Inbox)
            {
                return JsonDocument.Parse(reply.Payload);
            }
        }
    }
}
