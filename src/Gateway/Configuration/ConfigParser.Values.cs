using System.Globalization;
using System.Text;

namespace Courier.Gateway.Configuration;

/// <summary>Scalars: strings, numbers, sizes, booleans, dates, and <c>$variables</c>.</summary>
internal sealed partial class ConfigParser
{
    /// <summary>Environment values are parsed as this key's value, as nats-server does (<c>pk=&lt;value&gt;</c>).</summary>
    private const string EnvValueKey = "pk";

    /// <summary>A bcrypt hash (<c>$2a$...</c>) written unquoted is a string, not a variable (nats-server's bcryptPrefix).</summary>
    private const string BcryptPrefix = "2a$";

    /// <summary>"..." with escapes <c>\t \n \r \" \\ \xHH</c>; may span lines.</summary>
    private string ReadDoubleQuoted()
    {
        var open = Here();
        Advance();
        var sb = new StringBuilder();
        while (true)
        {
            var c = Peek();
            if (c == Eof)
            {
                throw Error(open, "unexpected end of file in a double-quoted string");
            }

            if (c == '"')
            {
                Advance();
                return sb.ToString();
            }

            if (c == '\\')
            {
                ReadEscape(sb);
                continue;
            }

            sb.Append((char)c);
            Advance();
        }
    }

    /// <summary>'...' taken literally, no escapes; may span lines.</summary>
    private string ReadSingleQuoted()
    {
        var open = Here();
        Advance();
        var start = _pos;
        while (Peek() != '\'')
        {
            if (Peek() == Eof)
            {
                throw Error(open, "unexpected end of file in a single-quoted string");
            }

            Advance();
        }

        var value = _text[start.._pos];
        Advance();
        return value;
    }

    /// <summary>
    /// <c>( ... )</c>: raw text up to a line holding only <c>)</c>; the text keeps the new line
    /// before that line, as nats-server's lexBlock.
    /// </summary>
    private string ReadBlockString()
    {
        var open = Here();
        Advance();
        var start = _pos;
        while (true)
        {
            var c = Peek();
            if (c == Eof)
            {
                throw Error(open, "unexpected end of file: the block string opened here has no closing ')' on a line by itself");
            }

            if (c == ')' && _pos > start && _text[_pos - 1] == '\n' && Peek(1) is Eof or '\n' or '\r')
            {
                var value = _text[start.._pos];
                Advance();
                return value;
            }

            Advance();
        }
    }

    /// <summary>
    /// A bare token, up to white space, a new line, <c>;</c>, <c>,</c>, <c>]</c>, <c>}</c> or the
    /// end; backslash escapes apply as in double quotes (nats-server's lexString). Without escapes
    /// it is classified: <c>true/false/yes/no/on/off</c> (any case) a bool; <c>$name</c> a variable;
    /// <c>-?digits</c> a long; <c>-?digits</c> plus a size suffix (<see cref="ByteSize.TryParse"/>)
    /// a long in bytes; <c>-?digits.digits</c> a double; <c>YYYY-MM-DDTHH:MM:SSZ</c> a UTC
    /// <see cref="DateTime"/>; anything else a string (<c>10s</c>, <c>127.0.0.1:4222</c>, <c>localhost</c>).
    /// </summary>
    private object? ReadBareValue()
    {
        var pos = Here();
        var start = _pos;
        StringBuilder? escaped = null;
        while (true)
        {
            var c = Peek();
            if (c is Eof or ' ' or '\t' or '\n' or '\r' or ';' or ',' or ']' or '}')
            {
                break;
            }

            if (c == '\\')
            {
                escaped ??= new StringBuilder().Append(_text, start, _pos - start);
                ReadEscape(escaped);
                continue;
            }

            escaped?.Append((char)c);
            Advance();
        }

        if (escaped is null && _pos == start)
        {
            // A value expected where a delimiter stands (`[ } ]`, `a: ,`). Found by the fuzzer: the empty
            // token reached Classify, which indexed its first character.
            var c = Peek();
            throw Error(pos, c == Eof ? "expected a value, found the end of the file" : $"expected a value, found '{(char)c}'");
        }

        return escaped is not null ? escaped.ToString() : Classify(_text[start.._pos], pos);
    }

    private object? Classify(string token, ConfigPosition pos)
    {
        switch (token.ToLowerInvariant())
        {
            case "true" or "yes" or "on":
                return true;
            case "false" or "no" or "off":
                return false;
        }

        if (token[0] == '$')
        {
            return ResolveVariable(token[1..], pos);
        }

        if (token[0] != '-' && !char.IsAsciiDigit(token[0]))
        {
            return token;
        }

        var sign = token[0] == '-' ? 1 : 0;
        var digits = sign;
        while (digits < token.Length && char.IsAsciiDigit(token[digits]))
        {
            digits++;
        }

        var rest = token.AsSpan(digits);
        if (digits > sign)
        {
            if (rest.IsEmpty || IsSizeSuffix(rest))
            {
                return ByteSize.TryParse(token, out var size, out var error) ? size : throw Error(pos, error!);
            }

            if (rest[0] == '.' && rest.Length > 1 && !rest[1..].ContainsAnyExceptInRange('0', '9'))
            {
                return double.TryParse(token, NumberStyles.AllowLeadingSign | NumberStyles.AllowDecimalPoint, CultureInfo.InvariantCulture, out var d)
                    && double.IsFinite(d)
                    ? d
                    : throw Error(pos, $"float '{token}' is out of the range");
            }

            if (sign == 0 && digits == 4 && rest[0] == '-')
            {
                return DateTime.TryParseExact(token, "yyyy-MM-dd'T'HH:mm:ss'Z'", CultureInfo.InvariantCulture,
                    DateTimeStyles.AdjustToUniversal | DateTimeStyles.AssumeUniversal, out var date)
                    ? date
                    : throw Error(pos, $"expected a Zulu formatted date (2006-01-02T15:04:05Z), but got '{token}'");
            }
        }

        // nats-server refuses a bare value starting with '-' unless it is a number; anything else
        // starting with a digit (10s, 1h30m, 127.0.0.1:4222) is a string.
        return sign == 1 ? throw Error(pos, $"expected a number but got '{token}'") : token;
    }

    /// <summary>One of k m g t p e (any case) followed only by b or i letters, e.g. <c>k</c>, <c>MB</c>, <c>Gi</c>, <c>kib</c>.</summary>
    private static bool IsSizeSuffix(ReadOnlySpan<char> rest) =>
        "kmgtpeKMGTPE".Contains(rest[0]) && !rest[1..].ContainsAnyExcept("bBiI");

    /// <summary>
    /// <c>$name</c>: the value of <c>name</c> in the current block or an enclosing one (keys seen
    /// so far), else the environment variable <c>name</c> parsed as a config value (so
    /// <c>PORT=4222</c> gives the integer 4222). Undefined names and reference cycles are errors.
    /// </summary>
    private object? ResolveVariable(string name, ConfigPosition pos)
    {
        if (name.Length == 0)
        {
            throw Error(pos, "expected a variable name after '$'");
        }

        if (name.StartsWith(BcryptPrefix, StringComparison.Ordinal))
        {
            return "$" + name;
        }

        for (var i = _scopes.Count - 1; i >= 0; i--)
        {
            if (_scopes[i].TryGetEntry(name, out var entry))
            {
                entry.IsUsedAsVariable = true;
                return entry.Value;
            }
        }

        if (!_envReferences.Add(name))
        {
            throw Error(pos, $"variable reference cycle for '{name}'");
        }

        try
        {
            var env = Environment.GetEnvironmentVariable(name)
                ?? throw Error(pos, $"variable reference for '{name}' can not be found (not defined above and not in the environment)");
            if (env.Length == 0)
            {
                return "";
            }

            ConfigMap parsed;
            try
            {
                parsed = new ConfigParser($"{EnvValueKey}={env}", null, _includeChain, _envReferences).ParseDocument();
            }
            catch (ConfigException e)
            {
                throw Error(pos, $"variable reference for '{name}' could not be parsed from the environment: {e.Reason}");
            }

            return parsed.TryGetValue(EnvValueKey, out var value)
                ? value
                : throw Error(pos, $"variable reference for '{name}' could not be parsed from the environment");
        }
        finally
        {
            _envReferences.Remove(name);
        }
    }

    /// <summary>At a backslash: appends the escaped character, as nats-server's lexStringEscape.</summary>
    private void ReadEscape(StringBuilder sb)
    {
        var pos = Here();
        Advance(); // '\'
        var c = Peek();
        switch (c)
        {
            case 't':
                sb.Append('\t');
                break;
            case 'n':
                sb.Append('\n');
                break;
            case 'r':
                sb.Append('\r');
                break;
            case '"':
                sb.Append('"');
                break;
            case '\\':
                sb.Append('\\');
                break;
            case 'x':
                if (_pos + 2 < _text.Length
                    && byte.TryParse(_text.AsSpan(_pos + 1, 2), NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out var b))
                {
                    sb.Append((char)b);
                    Advance();
                    Advance();
                    break;
                }

                throw Error(pos, "expected two hexadecimal digits after '\\x'");
            default:
                throw Error(pos, $"invalid escape character {Describe(c)}; only \\xXX, \\t, \\n, \\r, \\\", \\\\ are allowed");
        }

        Advance();
    }
}
