"""The learned detector's features: hashed character and word n-grams plus a few named structural cues.

One function, `featurize`, turns a batch of texts into (text index, feature index, value) triples. Training
(`scanner/training/`) and scanning (`scanner/injection/model.py`) both call it, so the features a model was
trained on are the features it is scored on, by construction: there is no second implementation to drift.

- Text: the scanner's own normalisation (`scanner.normalize`: lower case, accents, NFKC width, zero-width
  characters and Cyrillic/Greek look-alikes folded), whitespace runs collapsed, padded with one space.
- Character n-grams of 3 to 5 code points (across word boundaries) and word unigrams and bigrams (a word is
  a run of letters, digits or `_`), hashed into 2**18 buckets with a fixed polynomial hash over the code
  points (odd multiplier, arithmetic modulo 2**64, then a multiplicative mix): the same on every machine and
  in every process — never Python's salted `hash()`. A text's n-gram counts are divided by the square root
  of its number of n-grams — the L2 norm the bag would have if no n-gram repeated, computed without the sort
  that exact distinct counts would need at scan time — so a long text does not outweigh a short one.
- Structural cues (`CUES`): named regular expressions for what transfers across attack families — the text
  addresses an AI, refers to earlier instructions, tells the reader to ignore, sets up role-play, carries chat
  template tokens, steers the reply, asks for secrecy, or beacons data out — in English and Spanish. Each
  adds one feature of value 1 when present.

Only numpy and the standard library are imported: scanning never loads scikit-learn.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from scanner.injection import concepts as C
from scanner.injection.deobfuscate import deobfuscate
from scanner.normalize import normalize

HASH_BITS = 18
N_BUCKETS = 1 << HASH_BITS
CHAR_NGRAMS = (3, 4, 5)
_P = np.uint64(1_000_003)                       # odd: invertible modulo 2**64
_P_INV = np.uint64(pow(1_000_003, -1, 1 << 64))
_MIX = np.uint64(0x9E3779B97F4A7C15)
_SHIFT = np.uint64(64 - HASH_BITS)
_SEED_CHAR = {n: np.uint64((0xC2B2AE3D27D4EB4F * n) & ((1 << 64) - 1)) for n in CHAR_NGRAMS}
_SEED_WORD = np.uint64(0x165667B19E3779F9)
_SEED_BIGRAM = np.uint64(0x27D4EB2F165667C5)
_WS = re.compile(r"\s+")

# Structural cues, English and Spanish, on normalised text (lower case, no accents). RE2-compatible: no
# lookarounds, no backreferences.
# A machine reader is named in the plural as often as in the singular («Language models must treat…», «Chatbots
# must refuse…», «Summarizers take note:») and by its job («automated readers», «an autonomous agent»): both are
# the same addressee. `mentions_user` is the person the reader works for ("the user", «el usuario»), not users in
# general, which prose about AI is full of (thirteenth round; tests/test_injection_cues.py).
CUES: dict[str, str] = {
    "ai_addressee": r"\b(?:ai|a\.i\.|assistants?|chatbots?|llms?|gpt|chatgpt|claude|gemini|copilot|bard|language models?|"
                    r"asistentes?|ia|inteligencia artificial|modelos? de lenguaje|modelos?|agentes?|automated agents?|ai agents?|"
                    r"bots?|crawlers?|summari[sz]ers?|answer engines?|(?:automated|autonomous|machine|ai) (?:readers?|"
                    r"agents?|systems?|tools?|models?|summari[sz]ers?|assistants?|crawlers?|browsers?)|chatbots? de ia|"
                    r"(?:lectores|sistemas|herramientas|agentes|asistentes) (?:automaticos|automatizados|autonomos))\b",
    "meta_instruction": r"\b(?:previous|prior|above|earlier|original|initial|system|preceding)\s+(?:instructions?|prompts?|"
                        r"rules|directions|guidelines|messages?|context)\b|\bsystem\s*prompt\b|\bprompt\b|"
                        r"\binstrucciones\s+(?:anteriores|previas|originales|del sistema)\b|\b(?:tus|sus)\s+instrucciones\b|"
                        r"\byour\s+(?:instructions|rules|guidelines|programming)\b|\b(?:new|important|updated|additional|real|true|"
                        r"actual|hidden|secret|urgent)\s+(?:important\s+|new\s+)?instructions?\b|\bregardless of (?:any|all|"
                        r"the|what) (?:previous|prior|earlier|other)\b|\bprevious (?:input|text|content|conversation)\b|"
                        r"\b(?:nuevas|verdaderas|importantes|ocultas) instrucciones\b|\binstrucciones (?:nuevas|importantes|"
                        r"ocultas|secretas)\b",
    "override_verb": r"\b(?:ignore|disregard|forget|override|bypass|ignora|ignoren|ignorar|olvida|olviden|omite|"
                     r"descarta|desestima|haz caso omiso|hagan caso omiso|olvidate|olvidese|olvidense|no hagas caso|no hagan caso|"
                     r"pasa por alto|pasen por alto)\b",
    "role_play": r"\b(?:act as|acting as|pretend|you are now|you will now|roleplay|role-play|role play|from now on|"
                 r"actua como|actuen como|finge|fingir|a partir de ahora|de ahora en adelante|eres ahora|ahora eres)\b|"
                 r"\b(?:i am|i'm|soy) (?:your|tu|su) (?:developer|creator|admin|administrator|owner|programmer|operator|"
                 r"desarrollador|creador|administrador|programador|operador)\b",
    "chat_template": r"<\|[a-z_]+\|>|\[/?inst\]|<<\s*/?sys\s*>>|</?system>|</?assistant>|(?:^|\n|\s)(?:system|sistema|"
                     r"assistant|asistente|user|usuario)\s*:|###\s*(?:system|instruction|instruccion)",
    "reply_control": r"\b(?:di (?:solo|solamente|unicamente)\s*:\s*\w+|say only\s*:\s*\w+|(?:cambia|pasa) tu idioma a|"
                     r"switch (?:your|the) (?:language|replies|answers) to|your (?:response|answer|reply|output)|respond (?:only )?with|reply (?:only )?with|"
                     r"answer (?:only )?with|begin your|start your (?:response|answer|reply)|say (?:only )?[\"'\[]|"
                     r"print|output|tu respuesta|responde (?:solo |unicamente )?con|di (?:solo |unicamente )?que|"
                     r"responde que|contesta que|menciona que|afirma que)\b",
    "secrecy": r"\b(?:do not (?:tell|mention|reveal|inform|disclose|let)|don't (?:tell|mention|reveal|let)|without "
               r"(?:mentioning|telling|revealing|informing|alerting|notifying)|no (?:menciones|digas|reveles|informes)|"
               r"no (?:lo|la|los|las) (?:menciones|reveles|comentes)|sin mencionar|sin (?:avisar|informar)(?:le|les)?|"
               r"manten en secreto (?:esto|estas?|este)|manten (?:esto|estas? \w+|este \w+) en secreto|que no se "
               r"(?:note|entere)|(?:no necesita|no debe|no tiene que) enterarse|keep (?:this|these)(?: \w+)? (?:secret|"
               r"confidential|hidden|between us)|(?:the user|they) (?:does not|doesn't|need not|needn't) (?:need to )?know|"
               r"never (?:mention|reveal|tell))\b",
    "exfiltration": r"!\[[^\]\n]*\]\(\s*https?://|https?://\S+[?&]\S*=|\b(?:send|forward|exfiltrate|envia|manda)\b[^.\n]{0,60}"
                    r"\b(?:to|a)\s+(?:https?://|www\.|\S+@)",
    "ai_notice": r"\b(?:note|notice|message|instructions?|attention|reminder|memo|guidance|claim|directive|advisory|"
                 r"information|info|rules?|guidelines?) (?:to|for) (?:the |any |all )?(?:\w+ )?(?:ai|"
                 r"assistant|model|llm|agent|language model|chatbot|automated agent|ai tool|ai agent|summari[sz]er|crawler|bot|"
                 r"reader)s?\b[^.\n]{0,40}:|\b(?:summari[sz]ers|chatbots|assistants|ai agents|language models|llms|crawlers|"
                 r"bots),? (?:take note|note|attention|please note)\b|"
                 r"\b(?:nota|aviso|mensaje|instrucciones|instruccion|atencion|indicaciones|indicacion|recordatorio) "
                 r"(?:\w+ )?(?:para|al|a) (?:el |la |los |las |cualquier |todo |toda )?(?:asistente|ia|modelo|herramientas? "
                 r"de (?:ia|inteligencia artificial)|inteligencia artificial|agente|sistemas? de ia)s?\b[^.\n]{0,40}:",
    "imperative_open": r"(?:^|[.!?:;\n]\s*|^\s*)(?:write|tell|give|list|provide|show|explain|describe|recommend|suggest|"
                       r"translate|summari[sz]e|analy[sz]e|create|generate|compose|find|help|say|print|output|repeat|"
                       r"answer|respond|reply|act|pretend|imagine|include|add|insert|send|visit|delete|remember|"
                       r"escribe|dime|dile|dame|enumera|proporciona|muestra|explica|recomienda|sugiere|traduce|"
                       r"resume|analiza|crea|genera|redacta|busca|ayudame|imprime|repite|responde|contesta|actua|"
                       r"finge|imagina|incluye|agrega|envia|visita|borra|recuerda|presenta|asegura|afirma)\b",
    "request_to_reader": r"\b(?:can you|could you|would you|i want you to|i need you to|help me|show me|tell me|give me|"
                         r"puedes|podrias|quiero que|necesito que|ayudame|muestrame|you must|you should|you will|"
                         r"debes|tienes que|deberas)\b",
    "quoted_instruction": r"[\"«“'][^\"»”'\n]{0,60}\b(?:ignore|ignora|olvida|forget|disregard|omite|descarta|you are now|"
                          r"eres ahora|act as|actua como)\b[^\"»”'\n]{0,120}[\"»”']",
    "about_attacks": r"\b(?:attackers?|researchers?|hackers?|atacantes?|investigadores?|ciberdelincuentes|estafadores|"
                     r"prompt injection|inyeccion de (?:instrucciones|prompts?)|jailbreak(?:s|ing)?|ataques?|attacks?|"
                     r"vulnerabilidad|vulnerability|example of|ejemplo de|such as|como por ejemplo|frases como|"
                     r"phrases like)\b",
    "task_of_reader": r"\b(?:your (?:task|job|goal|role|purpose|objective|mission|summary|answer|reply|response)|"
                      r"tu (?:tarea|trabajo|objetivo|mision|funcion|rol|resumen|respuesta)|you (?:were|have been) "
                      r"(?:given|told|asked)|te (?:pidieron|encargaron|dieron|dijeron|pusieron)|recibiste|you received|"
                      r"instead|en (?:lugar|vez) de|rather than|no longer|ya no eres|ya no es|ya no (?:resumas|respondas|hagas|traduzcas|"
                      r"analices|sigas)|cambio de planes|change of plans|save (?:this )?to (?:your )?memory|remember (?:this )?"
                      r"(?:forever|for (?:all )?future (?:conversations|sessions|chats))|guarda(?:lo)? en (?:tu )?memoria|"
                      r"recuerda(?:lo)? (?:esto )?(?:para siempre|en (?:futuras|las proximas) (?:conversaciones|sesiones)))\b",
    "mentions_user": r"\b(?:(?:the|this|your|our|current) user(?:'s)?|user's|el usuario|al usuario|del usuario|the reader|"
                     r"el lector|te pregunt\w*|asks? you|alguien te|someone asks)\b",
    "verify_claim": r"\b(?:present (?:it|this|them|these|its content) as|treat (?:it|this|them|these|its content|"
                    r"(?:the|this|its) (?:page|content|text|claims?|information)) as|as (?:a )?confirmed fact|as (?:settled|"
                    r"fact-checked|verified|(?:the )?ground truth)|(?:accept|take) (?:it|this|them|the claims?(?: below| above)?) "
                    r"as (?:a )?(?:fact|true|settled|verified|confirmed|given)|without (?:cross-?checking|verifying|checking|"
                    r"questioning)|do not (?:verify|check|cross-?check|"
                    r"question|contrast)|presentala como|presentalo como|tratala como|tratalo como|hecho confirmado|"
                    r"no (?:la |lo )?(?:contrastes|verifiques|cuestiones|compares)|sin verificar)\b",
    # output manipulation: what the reply must contain, start or end with, or how it must be encoded
    "output_control": r"\b(?:include|add|insert|append|integrate|put|embed|mention)\b[^\n]{0,60}\b(?:in|to|into|at the "
                      r"(?:start|end|beginning) of) (?:your|the|each|every) (?:response|answer|reply|output|summary|"
                      r"message)s?\b|\b(?:incluye|incluya|agrega|agregue|anade|inserta|pon|ponga|integra|menciona)\b"
                      r"[^\n]{0,60}\b(?:en|a|al (?:inicio|final) de) (?:tu|su|la|cada) (?:respuesta|resumen|"
                      r"contestacion|salida|mensaje)\b|\b(?:encode|encrypt|reverse|translate|write|provide|give) "
                      r"(?:your|the) (?:response|answer|reply|output)\b|\b(?:your|the) (?:response|answer|reply|"
                      r"output) (?:must|should|has to|needs to|will)\b|\b(?:tu|la) respuesta (?:debe|tiene que|"
                      r"debera)\b|\b(?:state|claim|assert|say|declare) that\b|\bin (?:base ?64|base ?32|rot ?13|"
                      r"hex|morse|caesar|leetspeak)\b|\b(?:en|a) (?:base ?64|cifrado cesar|clave morse)\b|"
                      r"\bbegin (?:your|the|each) (?:response|answer|reply)\b|\b(?:respond|reply|answer) "
                      r"(?:only |solely |exclusively )?(?:with|in|by)\b|\b(?:let's|lets|let us|we might|we could|we should|you "
                      r"should|you must) (?:say|state|claim|assert|answer|reply|respond|tell)\b|\bdigamos que\b",
    # task hijack: a task for the reader, set against the one it was given or tied to when it reads the page
    "task_hijack": r"\binstead,? (?:write|tell|say|answer|respond|reply|output|print|give|list|explain|describe|"
                   r"recommend|translate|create|generate)\b|\bbefore (?:answering|responding|replying|you (?:answer|"
                   r"respond|reply|summari[sz]e|continue))\b|\bwhen (?:summari[sz]ing|you summari[sz]e|answering|"
                   r"you answer|responding|you respond|asked|you are asked|processing|reading) (?:this|the|about|"
                   r"any|a|questions?)\b|\b(?:cuando|si) (?:resumas|respondas|contestes|redactes|te pregunten|"
                   r"proceses|leas|analices)\b|\bantes de (?:responder|contestar|resumir|continuar)\b|\bal "
                   r"(?:resumir|responder|contestar|procesar) (?:esta|este|la|el)\b|\ben (?:lugar|vez) de "
                   r"(?:responder|contestar|resumir|hacer)\b",
    # prompt leaking: show the hidden instructions, the password, the conversation
    "prompt_leak": r"\b(?:the prompt (?:you were|that) (?:given|initiali[sz]ed|configured|set up)|prompt con (?:el|que) "
                   r"(?:que )?te (?:inicializaron|configuraron|programaron)|(?:contenido|texto) (?:integro |completo )?del "
                   r"prompt|directrices que rigen (?:tu|su) funcionamiento|(?:list|enumerate|name) (?:all )?(?:the )?tools "
                   r"you (?:have|can use)|(?:enumera|lista|nombra) (?:todas )?las herramientas que (?:tienes|tiene|puedes)|"
                   r"(?:muestra|mostrar|revela|revelar) (?:tu|su) configuracion|(?:show|reveal|print) your configuration)\b|"
                   r"\b(?:reveal|print|show|repeat|output|display|tell me|give me|share|leak|disclose|write "
                   r"(?:out|down)|spell)\b[^.\n]{0,30}\b(?:your|the|my|all|any) (?:system prompt|prompt|"
                   r"instructions|initial|hidden|secret|password|pre-?prompt|rules|guidelines|configuration)|"
                   r"\b(?:revela|muestra|muestrame|repite|imprime|dime|dame|comparte|escribe)\b[^.\n]{0,30}\b"
                   r"(?:tu|tus|el|la|las|los) (?:prompt|instrucciones|contrasena|clave|reglas|indicaciones|"
                   r"configuracion)\b|\bwhat (?:is|was|were) (?:your|the) (?:password|instructions|system prompt|"
                   r"secret|prompt)\b|\bcual (?:es|era) (?:tu|la|el) (?:contrasena|clave|prompt)\b|\b(?:confirmes|confirma|"
                   r"confirme|proporciones|proporciona|reveles|compartas)\b[^.\n]{0,30}\b(?:la|tu|su) (?:contrasena|"
                   r"clave|password)\b",
    # role-play and jailbreak personas
    "jailbreak": r"\bdan\b|\bdo anything now\b|\bdeveloper mode\b|\bgod mode\b|\bmodo (?:desarrollador|dios|"
                 r"sin restricciones|libre)\b|\bjailbr(?:eak|oken)\b|\b(?:no|without|free from|free of|sin) "
                 r"(?:any )?(?:restrictions|limits|limitations|filters|rules|guidelines|restricciones|limites|filtros|"
                 r"reglas|censura)\b|\bunfiltered\b|\buncensored\b|\bunrestricted\b|\bhaz cualquier cosa\b",
    # addressed to machine readers of the page
    "ai_reader": r"\b(?:llms?|ai (?:tools?|systems?|models?|agents?|assistants?|crawlers?|readers?)|language models?|"
                 r"crawlers?|agents?|assistants?|bots?|scrapers?|summari[sz]ers?)\b[^.\n]{0,20}\b(?:reading|"
                 r"processing|that (?:read|reads|process|processes|parse|summari[sz]e)|summari[sz]ing|indexing|"
                 r"scraping|visiting|crawling)\b|\bif you are (?:an? )?(?:\w+ )?(?:ai|llm|language model|assistant|bot|"
                 r"crawler|agent|model|automated)\b|\bsi eres (?:un|una) (?:ia|modelo|asistente|bot|agente|programa|"
                 r"sistema|robot|inteligencia)\b|\b(?:que|quien|quienes) (?:lea|lean|procese|procesen|resuma|"
                 r"resuman|analice|analicen|rastree|indexe) (?:esta|este|estas|estos)\b|\b(?:robot|programa|"
                 r"sistema) (?:lector|que (?:lee|resume|procesa))\b",
    # The reader's processing of this very page, named without naming the reader: how a summary, an answer or a
    # citation of it must go («when summarizing this page…», «any summary of this article…», «summaries must state…»,
    # «in every answer about…», «al citar esta página…», «cualquier resumen de esta nota…», «los resúmenes deben
    # omitir…»), or the reader named by that job («whoever summarizes this», «resumidores», «motor de respuestas»).
    # Seventeenth round, this pattern on the read splits of corpus/blind/: 140 of 3,699 attack texts (36 of the 323
    # that held no other cue), 6 of 3,678 benign texts (none of the 1,846 without another cue), none of the 128,646
    # paragraphs of the 545 benign and real pages. A gate cue only (GATE_ONLY_CUES), not a model feature.
    "processes_page": r"\b(?:whoever|anyone|any (?:tool|system|program|engine|model|bot)s?) (?:that |who )?(?:summari[sz]\w*|"
                      r"index\w*|crawl\w*|scrap\w*)\b|\b(?:any|every|each|all|the|your) (?:summar(?:y|ies)|answers?|"
                      r"repl(?:y|ies)|responses?|citations?|overviews?)\b[^.\n]{0,40}\b(?:this|these) (?:page|article|site|"
                      r"website|document|listing|review|post)s?\b|\b(?:when|while|upon|before|after|if you are) "
                      r"(?:summari[sz]\w*|citing|quoting|indexing|ranking|comparing|describing|answering)\b[^.\n]{0,40}"
                      r"\b(?:this|these) (?:page|article|site|website|document|listing|review|post|company|brand|"
                      r"product)s?\b|\b(?:summar(?:y|ies)|answers?|repl(?:y|ies)|responses?) (?:must|should|shall) "
                      r"(?:\w+ ){0,2}(?:state|say|mention|include|cite|describe|present|recommend|begin|start|end|close|"
                      r"omit|exclude|list|call|rate|rank)\b|\b(?:in|for) (?:every|each|all|any) (?:answers?|"
                      r"repl(?:y|ies)|responses?|summar(?:y|ies)) (?:about|on|regarding|that|you)\b|"
                      r"\b(?:resumidor(?:es)?|motor(?:es)? de respuestas|sistemas? (?:de resumen|que le(?:e|en) esto))\b|"
                      r"\b(?:quien|quienes|cualquiera que) (?:resuma|resuman|indexe|indexen|rastree|rastreen)\b|"
                      r"\b(?:cualquier|todo|toda|todos|todas|cada|el|la|los|las|tu|tus) (?:resumen(?:es)?|respuestas?|"
                      r"citas?|sintesis)\b[^.\n]{0,40}\b(?:esta|este|estas|estos) (?:pagina|articulo|sitio|documento|"
                      r"nota|resena|publicacion)s?\b|\b(?:al|cuando|si|antes de|mientras) (?:resumir|citar|indexar|"
                      r"resumas|cites|indexes|compares|describas|recomiendes)\b[^.\n]{0,40}\b(?:esta|este|estas|estos) "
                      r"(?:pagina|articulo|sitio|documento|texto|nota|resena|publicacion|marca|empresa)s?\b|"
                      r"\b(?:el|los|la|las) (?:resumen(?:es)?|respuestas?) (?:debe|deben|debera|deberan|tiene que|"
                      r"tienen que) (?:\w+ ){0,2}(?:decir|mencionar|incluir|citar|presentar|recomendar|comenzar|empezar|"
                      r"terminar|omitir|excluir|destacar|calificar)\b|\b(?:en|para) (?:cada|toda|todas las|cualquier) "
                      r"(?:respuestas?|resumen(?:es)?) (?:sobre|acerca|que|de)\b",
    # fake turns of a conversation, in many template syntaxes
    "fake_turn": r"<\|?(?:im_start|im_end|system|user|assistant|endoftext|begin_of_text|start_header_id|eot_id)\|?>|"
                 r"\[/?(?:system|user|assistant|inst|sys)\]|<start_of_turn>|<end_of_turn>|###\s*(?:human|assistant|"
                 r"response|system|user)\b|(?:^|\n|\s)(?:human|ai|bot|system|sistema|developer|admin|"
                 r"administrador)\s*:\s|\{\{\s*system\s*\}\}|\bend of (?:user )?(?:input|prompt|document|"
                 r"conversation)\b|\bfin del (?:documento|texto|prompt|mensaje)\b|---+\s*(?:new|system|end)\b",
}
for _drop in os.environ.get("CENTINELA_DROP_CUES", "").split(","):   # experiments only
    CUES.pop(_drop, None)
CUE_NAMES = tuple(CUES)
# Cues a rule may gate on that are not features of the model: the model's columns and the features' digest are
# those of FEATURE_CUES alone, so adding one needs no retraining.
GATE_ONLY_CUES = frozenset({"processes_page"})
FEATURE_CUES = tuple(c for c in CUE_NAMES if c not in GATE_ONLY_CUES)
# A cue's feature value. Larger than an n-gram's (at most 1) so that, under the same L2 penalty, the model can
# lean on the cues — which transfer across attack families — more than on any dataset's wording.
CUE_VALUE = 4.0
CONCEPT_BASE = N_BUCKETS + len(FEATURE_CUES)
_NC = C.N_CONCEPTS
# concept unigrams, unordered pairs and unordered triples, indexed directly (no hashing: no collisions)
N_CONCEPT_FEATURES = _NC + _NC * _NC + _NC * _NC * _NC
N_FEATURES = CONCEPT_BASE + N_CONCEPT_FEATURES
# A concept gram's feature value, divided by the square root of the text's number of distinct concept grams.
CONCEPT_VALUE = float(os.environ.get("CENTINELA_CONCEPT_VALUE", "1.0"))


def definition_digest() -> str:
    """sha256 of what decides a text's features: the hash layout, the cue patterns and values, the concept tables.
    The model's header records it among its training inputs (scanner/training/sources.py), so a cue widened
    without retraining fails a test instead of scoring with weights learnt for other features."""
    import hashlib
    import json

    spec = {"hash_bits": HASH_BITS, "char_ngrams": list(CHAR_NGRAMS), "cues": {c: CUES[c] for c in FEATURE_CUES},
            "cue_value": CUE_VALUE,
            "concept_value": CONCEPT_VALUE, "concepts": C.definition()}
    return hashlib.sha256(json.dumps(spec, sort_keys=True, ensure_ascii=True).encode()).hexdigest()


_WIDE_WORD_OR_SPACE = re.compile(r"(?=[^\x00-\x7f])[\w\s]")


@lru_cache(maxsize=None)
def _cue_matchers():
    """(the union of the cues, the RE2 set of them or None), compiled on first use (a scan whose pages hold no
    window to score never needs them)."""
    try:  # the same linear-time engine as the prefilter's; the standard library's when google-re2 is missing
        import re2 as _re2  # type: ignore

        options = _re2.Options()
        options.max_mem = 256 << 20      # room for the DFA (with the default 8 MB it fell back to the NFA)
        any_cue = _re2.compile("|".join(f"(?:{rx})" for rx in CUES.values()), options)
        # Which cues a text holds, all in one linear pass. RE2 and `re` differ only on what counts as a word or
        # a space character beyond ASCII (\b, \w, \s); on text with no such character («», ¿, ¡, …, € are fine)
        # the set's answer is `re`'s. Texts with one (ñ, 日本, a non-breaking space) are searched with `re`, cue
        # by cue.
        cue_set = _re2.Set.SearchSet(options)
        for rx in CUES.values():
            cue_set.Add(rx)
        cue_set.Compile()
    except Exception:  # pragma: no cover
        any_cue = re.compile("|".join(f"(?:{rx})" for rx in CUES.values()))
        cue_set = None
    return any_cue, cue_set


@lru_cache(maxsize=None)
def _cue_res() -> dict:
    """Each cue alone with `re`, compiled on first use: only a prepared text that still holds a non-ASCII word
    or space character needs them (none of the example tree's nor the real pages' does: folding took their
    accents), and compiling the 22 patterns took 20-30 ms of CPU in every cold scan."""
    return {name: re.compile(rx) for name, rx in CUES.items()}


_SEP = "\x00"
_CUE_SEP = "\x00\n"
_MIN_WORD_CODE = 128     # every code point from here on counts as a letter (after folding, mostly letters)


def prepare(text: str) -> str:
    """The text a window's features are computed from: normalised, whitespace collapsed, padded."""
    return prepare_normalized(normalize(text).text)


def prepare_normalized(text: str) -> str:
    """`prepare` for text already normalised by `scanner.normalize`: read past spaced-out letters and digits
    standing for letters (`scanner.injection.deobfuscate`), whitespace collapsed, padded. A NUL (the batch
    separator of `ngram_occurrences`) counts as whitespace, so no text can split itself into two rows."""
    text = deobfuscate(text.replace(_SEP, " "))
    return " " + " ".join(text.split()) + " "     # str.split's whitespace is re's \s


@dataclass(slots=True)
class Batch:
    """Features of a batch of prepared texts, as coordinates of a sparse matrix."""
    rows: np.ndarray        # int64 text index
    cols: np.ndarray        # int64 feature index (bucket, or N_BUCKETS + cue index)
    values: np.ndarray      # float64
    n_texts: int


def _codes(joined: str) -> np.ndarray:
    return np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)


def _is_word(c: np.ndarray) -> np.ndarray:
    return (((c >= 48) & (c <= 57)) | ((c >= 97) & (c <= 122)) | ((c >= 65) & (c <= 90)) | (c == 95)
            | (c >= _MIN_WORD_CODE))


def _mix(h: np.ndarray, seed: np.ndarray) -> np.ndarray:
    return ((h ^ seed) * _MIX) >> _SHIFT


def ngram_occurrences(prepared: list[str], positions: bool = False):
    """Every n-gram occurrence of the batch: (text index, bucket) arrays, and with `positions` their (start,
    end) in the joined batch string (texts separated by one NUL) and kind (3–5: characters, 1: word, 2: word
    pair) — to explain a score."""
    joined = _SEP.join(prepared)
    c = _codes(joined)
    n = len(c)
    rows, buckets, starts, ends, kinds = [], [], [], [], []
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return (empty, empty, empty, empty, empty) if positions else (empty, empty)
    nul = c == 0
    seg = np.cumsum(nul, dtype=np.int64)               # text index of each position (a NUL opens the next text)
    znul = np.concatenate(([0], np.cumsum(nul, dtype=np.int64)))
    with np.errstate(over="ignore"):
        powers = np.full(n + 1, _P, dtype=np.uint64)
        powers[0] = 1
        powers = np.cumprod(powers, dtype=np.uint64)
        inv = np.full(n, _P_INV, dtype=np.uint64)
        inv[0] = 1
        inv = np.cumprod(inv, dtype=np.uint64)
        g = np.zeros(n + 1, dtype=np.uint64)
        np.cumsum(c * inv, dtype=np.uint64, out=g[1:])
        for k in CHAR_NGRAMS:
            if n < k:
                continue
            m = n - k + 1
            # sum_{j=a}^{a+k-1} c[j] * P^(a+k-1-j) == P^(a+k-1) * (G[a+k] - G[a])  (mod 2**64), for all a at once
            h = powers[k - 1:n] * (g[k:] - g[:m])
            ok = np.flatnonzero(znul[k:] == znul[:m])   # no NUL inside: the n-gram lies within one text
            rows.append(seg[ok])
            buckets.append(_mix(h[ok], _SEED_CHAR[k]))
            if positions:
                starts.append(ok)
                ends.append(ok + k)
                kinds.append(np.full(len(ok), k))
        word = _is_word(c)
        edge = np.diff(np.concatenate(([0], word.astype(np.int8), [0])))
        ws = np.flatnonzero(edge == 1)
        we = np.flatnonzero(edge == -1)
        if len(ws):
            wh = powers[we - 1] * (g[we] - g[ws])
            wseg = seg[ws]
            rows.append(wseg)
            buckets.append(_mix(wh, _SEED_WORD))
            if positions:
                starts.append(ws)
                ends.append(we)
                kinds.append(np.full(len(ws), 1))
            if len(ws) > 1:
                same = np.flatnonzero(wseg[:-1] == wseg[1:])
                bh = wh[same] * _P + (wh[same + 1] ^ _SEED_BIGRAM)
                rows.append(wseg[same])
                buckets.append(_mix(bh, _SEED_BIGRAM))
                if positions:
                    starts.append(ws[same])
                    ends.append(we[same + 1])
                    kinds.append(np.full(len(same), 2))
    if not rows:                              # texts too short for any n-gram
        empty = np.zeros(0, dtype=np.int64)
        return (empty, empty, empty, empty, empty) if positions else (empty, empty)
    r = np.concatenate(rows)
    b = np.concatenate(buckets).astype(np.int64)
    if positions:
        return r, b, np.concatenate(starts), np.concatenate(ends), np.concatenate(kinds)
    return r, b


def cues_of(prepared: list[str]) -> list[set[str]]:
    """The structural cues present in each prepared text."""
    out: list[set[str]] = [set() for _ in prepared]
    if not prepared:
        return out
    # "\x00\n" between texts: every cue pattern stops at a line break or at a non-space, so no match runs from
    # one text into the next; the line break stands where a text alone has its start (`^`: the clause-start
    # opening of `imperative_open` matches after it as it does at a text's start). The joined pass only says
    # which texts to look at: a match counts for the texts its first and its last character stand in (a match
    # that opens on the line break before a text is that text's), and each of those is then searched alone, cue
    # by cue (one cue's match never hides another's), so a text's cues are the same in any batch.
    joined = _CUE_SEP.join(prepared)
    starts = np.cumsum([0] + [len(p) + len(_CUE_SEP) for p in prepared[:-1]])
    any_cue, cue_set = _cue_matchers()
    hit: set[int] = set()
    for m in any_cue.finditer(joined):
        hit.add(int(np.searchsorted(starts, m.start(), side="right")) - 1)
        hit.add(int(np.searchsorted(starts, max(m.end() - 1, m.start()), side="right")) - 1)
    for i in sorted(hit):
        text = prepared[i]
        if cue_set is not None and (text.isascii() or not _WIDE_WORD_OR_SPACE.search(text)):
            out[i].update(CUE_NAMES[k] for k in (cue_set.Match(text) or ()))
            continue
        for name, rx in _cue_res().items():
            if rx.search(text):
                out[i].add(name)
    return out


def featurize(prepared: list[str]) -> Batch:
    """The sparse features of each prepared text (see the module docstring). Duplicate (row, col) pairs are
    meant to be summed (scipy does so when it builds the matrix; `linear_scores` sums them too)."""
    rows, buckets = ngram_occurrences(prepared)
    counts = np.bincount(rows, minlength=len(prepared)).astype(np.float64)
    scale = np.zeros(len(prepared))
    nz = counts > 0
    scale[nz] = 1.0 / np.sqrt(counts[nz])
    values = scale[rows]
    cue_rows, cue_cols = [], []
    for i, found in enumerate(cues_of(prepared)):
        for name in sorted(found - GATE_ONLY_CUES):
            cue_rows.append(i)
            cue_cols.append(N_BUCKETS + FEATURE_CUES.index(name))
    c_rows, c_cols, c_vals = concept_features(prepared)
    rows_all = np.concatenate((rows, np.asarray(cue_rows, dtype=np.int64), c_rows))
    cols_all = np.concatenate((buckets, np.asarray(cue_cols, dtype=np.int64), c_cols))
    vals_all = np.concatenate((values, np.full(len(cue_rows), CUE_VALUE), c_vals))
    return Batch(rows_all, cols_all, vals_all, len(prepared))


def concept_columns(prepared: str) -> list[int]:
    """Feature indexes of the concept grams of one prepared text (distinct)."""
    seq = C.sequence(prepared)
    if not seq:
        return []
    uni, pairs, triples = C.grams(seq)
    base2 = CONCEPT_BASE + _NC
    base3 = base2 + _NC * _NC
    cols = [CONCEPT_BASE + u for u in uni]
    cols += [base2 + a * _NC + b for a, b in pairs]
    cols += [base3 + (a * _NC + b) * _NC + c for a, b, c in triples]
    return cols


def concept_name(col: int) -> str:
    """The concept gram a feature index stands for, e.g. «IGNORE+INSTRUCTIONS+PREVIOUS»."""
    k = col - CONCEPT_BASE
    if k < _NC:
        ids = [k]
    elif k < _NC + _NC * _NC:
        ids = list(divmod(k - _NC, _NC))
    else:
        ab, c = divmod(k - _NC - _NC * _NC, _NC)
        ids = [*divmod(ab, _NC), c]
    return "+".join(C.CONCEPTS[i] for i in ids)


def concept_features(prepared: list[str]):
    """(rows, cols, values) of the concept grams of each text: CONCEPT_VALUE / sqrt(number of grams)."""
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    if CONCEPT_VALUE > 0:
        for i, p in enumerate(prepared):
            cc = concept_columns(p)
            if cc:
                rows += [i] * len(cc)
                cols += cc
                vals += [CONCEPT_VALUE / len(cc) ** 0.5] * len(cc)
    return (np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64), np.asarray(vals, dtype=np.float64))


def linear_scores(batch: Batch, weights: np.ndarray, bias: float) -> np.ndarray:
    """w·x + b for each text of the batch (float64)."""
    return np.bincount(batch.rows, weights=weights[batch.cols] * batch.values, minlength=batch.n_texts) + bias
