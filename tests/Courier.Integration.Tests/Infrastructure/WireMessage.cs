using System.Text;

namespace Courier.Integration.Tests.Infrastructure;

/// <summary>A MSG or HMSG frame as received.</summary>
/// <param name="Op">"MSG" or "HMSG".</param>
/// <param name="Subject">The subject it was published to.</param>
/// <param name="Sid">The subscription id it was delivered for.</param>
/// <param name="Reply">The reply subject, or null.</param>
/// <param name="Headers">The header block (HMSG only; empty for MSG).</param>
/// <param name="Payload">The payload, without the header block.</param>
public sealed record WireMessage(string Op, string Subject, string Sid, string? Reply, byte[] Headers, byte[] Payload)
{
    /// <summary>The payload as UTF-8 text.</summary>
    public string PayloadText => Encoding.UTF8.GetString(Payload);

    /// <summary>The header block as text.</summary>
    public string HeaderText => Encoding.UTF8.GetString(Headers);

    /// <summary>Parses a whole frame: <c>MSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;#bytes&gt;\r\n[payload]\r\n</c>
    /// or <c>HMSG &lt;subject&gt; &lt;sid&gt; [reply] &lt;#header bytes&gt; &lt;#total bytes&gt;\r\n[headers][payload]\r\n</c>.
    /// Returns null when the frame is not a well-formed MSG/HMSG.</summary>
    public static WireMessage? TryParse(byte[] frame)
    {
        var lineEnd = frame.AsSpan().IndexOf("\r\n"u8);
        if (lineEnd < 0)
        {
            return null;
        }

        var args = Encoding.UTF8.GetString(frame, 0, lineEnd).Split(' ', StringSplitOptions.RemoveEmptyEntries);
        var body = frame.AsSpan(lineEnd + 2);
        if (!body.EndsWith("\r\n"u8))
        {
            return null;
        }

        body = body[..^2];
        switch (args)
        {
            case ["MSG", var subject, var sid, var size] when int.TryParse(size, out var n) && n == body.Length:
                return new WireMessage("MSG", subject, sid, null, [], body.ToArray());
            case ["MSG", var subject, var sid, var reply, var size] when int.TryParse(size, out var n) && n == body.Length:
                return new WireMessage("MSG", subject, sid, reply, [], body.ToArray());
            case ["HMSG", var subject, var sid, var hdr, var total]
                when int.TryParse(hdr, out var h) && int.TryParse(total, out var t) && t == body.Length && h <= t:
                return new WireMessage("HMSG", subject, sid, null, body[..h].ToArray(), body[h..].ToArray());
            case ["HMSG", var subject, var sid, var reply, var hdr, var total]
                when int.TryParse(hdr, out var h) && int.TryParse(total, out var t) && t == body.Length && h <= t:
                return new WireMessage("HMSG", subject, sid, reply, body[..h].ToArray(), body[h..].ToArray());
            default:
                return null;
        }
    }
}
